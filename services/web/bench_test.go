package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchPage is a page of about 100 KB: headings, paragraphs, links and
// a list, as an article reads.
func benchPage() string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>A long article</title><style>body{}</style></head><body><main>")
	for i := 0; b.Len() < 100<<10; i++ {
		fmt.Fprintf(&b, "<h2>Section %d</h2><p>Some <b>text</b> with <a href=\"/p/%d\">a link</a> and <code>code</code>, then more words to read in a paragraph of an ordinary length.</p><ul><li>one</li><li>two</li></ul>", i, i)
	}
	b.WriteString("</main><script>var x = 1;</script></body></html>")
	return b.String()
}

// p50 is the median of d.
func p50(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkWebFetch100KB: a fetch of a 100 KB page from a loopback test
// host (named by --private-host), beside a plain Go http.Get of the same
// page in the same run, each op one of each, p50 of each reported:
// link-ns/op is the tool's fetch call through its MCP server (in-memory
// transport, the gate included) of the page served as text: what the
// tool adds is the call's framing, reading the URL, the check, the
// guarded dial and the limits; fetch-ns/op the same without MCP;
// html-ns/op the page as HTML, made markdown too.
func BenchmarkWebFetch100KB(b *testing.B) {
	page := benchPage()
	s := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/html" {
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		} else {
			rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		io.WriteString(rw, page)
	}))
	defer s.Close()
	tool, err := New(Config{PrivateHosts: []string{"127.0.0.1"}})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ct, st := mcp.NewInMemoryTransports()
	go tool.MCP().Run(ctx, Gate(st, 0))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	var link, direct, base, htm []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		resp, err := http.Get(s.URL + "/text")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadAll(resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		t1 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": s.URL + "/text"}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
		t2 := time.Now()
		if _, err := tool.Fetch(ctx, s.URL+"/text"); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		if _, err := tool.Fetch(ctx, s.URL+"/html"); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		base, link, direct, htm = append(base, t1.Sub(t0)), append(link, t2.Sub(t1)), append(direct, t3.Sub(t2)), append(htm, t4.Sub(t3))
	}
	b.StopTimer()
	l, bs := p50(link), p50(base)
	b.ReportMetric(float64(l.Nanoseconds()), "link-ns/op")
	b.ReportMetric(float64(bs.Nanoseconds()), "base-ns/op")
	b.ReportMetric(float64(l)/float64(bs), "x-baseline")
	b.ReportMetric(float64(p50(direct).Nanoseconds()), "fetch-ns/op")
	b.ReportMetric(float64(p50(htm).Nanoseconds()), "html-ns/op")
}

// BenchmarkWebConvert: HTML made markdown, in bytes of HTML a second
// (b.SetBytes: go test's MB/s column).
func BenchmarkWebConvert(b *testing.B) {
	page := []byte(benchPage())
	b.SetBytes(int64(len(page)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, _, err := convertHTML(page, nil); err != nil {
			b.Fatal(err)
		}
	}
}
