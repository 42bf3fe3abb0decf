package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/net/html"

	"lnk.dev/lnk/internal/testenv"
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
// page in the same run, each op one of each in turn, p50 of each
// reported (the target: the tool's overhead at most 2x the
// http.Get):
//
//   - base-ns/op: http.Get of the page, read whole (the baseline);
//   - link-ns/op, x-baseline: the tool's fetch call of the page as HTML
//     through its MCP server (in-memory transport, the call gate
//     included, the go-sdk's client decoding the answer): the whole call,
//     the page made markdown included;
//   - conv-ns/op: the same page made markdown alone (convertHTML);
//   - overhead-ns/op, x-overhead: the tool's overhead, each op's call
//     less that op's conversion: what the tool adds to a fetch beyond
//     the conversion (the framing and JSON of MCP on both sides, reading
//     the URL, the check, the guarded dial, the limits);
//   - text-ns/op, x-text: the fetch call of the same page served as text
//     (no conversion, an answer of the page's full 100 KB) through MCP;
//   - raw-ns/op, x-raw: that call from a client that writes its request
//     line and decodes the answer's line once with encoding/json, as a
//     harness's own client may ([rawClient]): what is left is the tool's
//     own part of a call (its server's encoding of the answer, the
//     fetch), the go-sdk client's several decoding passes not in it;
//   - fetch-ns/op: that fetch without MCP;
//   - proc-base-ns/op: the fair baseline: http.Get of the page, read
//     whole, in a process of its own (this test binary as `http-get`,
//     [runHTTPGet]) asked through a pipe and answering the page through
//     it, timed from the request's write to the answer's last byte — the
//     process wakes and the pipe a call to lnk-web pays too;
//   - proc-ns/op: the fetch call of the page as HTML to the lnk-web
//     binary over its stdio pipes (its own transport, [mcpstdio]), from a
//     client decoding the answer once ([rawClient]); x-proc against the
//     in-process http.Get, x-proc-fair against proc-base;
//   - proc-text-ns/op: the same call of the page served as text (no
//     conversion: the tool's overhead across processes, the 100 KB page
//     carried back as the baseline carries it); x-proc-text against the
//     in-process http.Get, x-proc-text-fair against proc-base (the
//     issue's target, fairly measured: at most 2x). The call less a
//     conversion timed here would not do: lnk-web converts in its own
//     process, on a heap and a core of its own.
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
	raw := newRawClient(b, tool)
	proc := newProcClient(b, testenv.Bin(b, "lnk-web"), "--private-host", "127.0.0.1")
	getter := newGetter(b)
	call := func(path string) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: map[string]any{"url": s.URL + path}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	var base, link, conv, over, text, rawc, direct, pbase, pcall, ptext []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		resp, err := http.Get(s.URL + "/html")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadAll(resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		t1 := time.Now()
		call("/html")
		t2 := time.Now()
		if _, _, _, err := convertHTML([]byte(page), nil); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		call("/text")
		t4 := time.Now()
		raw.fetch(s.URL + "/text")
		t5 := time.Now()
		if _, err := tool.Fetch(ctx, s.URL+"/text"); err != nil {
			b.Fatal(err)
		}
		t6 := time.Now()
		getter.get(s.URL + "/html")
		t7 := time.Now()
		proc.fetch(s.URL + "/html")
		t8 := time.Now()
		proc.fetch(s.URL + "/text")
		t9 := time.Now()
		pbase, pcall, ptext = append(pbase, t7.Sub(t6)), append(pcall, t8.Sub(t7)), append(ptext, t9.Sub(t8))
		base, link, conv = append(base, t1.Sub(t0)), append(link, t2.Sub(t1)), append(conv, t3.Sub(t2))
		over, text, rawc, direct = append(over, t2.Sub(t1)-t3.Sub(t2)), append(text, t4.Sub(t3)), append(rawc, t5.Sub(t4)), append(direct, t6.Sub(t5))
	}
	b.StopTimer()
	bs, pbs := float64(p50(base)), float64(p50(pbase))
	for _, m := range []struct {
		name, ratio, fair string
		d                 []time.Duration
	}{{"base-ns/op", "", "", base}, {"link-ns/op", "x-baseline", "", link}, {"conv-ns/op", "", "", conv}, {"overhead-ns/op", "x-overhead", "", over},
		{"text-ns/op", "x-text", "", text}, {"raw-ns/op", "x-raw", "", rawc}, {"fetch-ns/op", "", "", direct},
		{"proc-base-ns/op", "", "", pbase}, {"proc-ns/op", "x-proc", "x-proc-fair", pcall}, {"proc-text-ns/op", "x-proc-text", "x-proc-text-fair", ptext}} {
		v := float64(p50(m.d))
		b.ReportMetric(v, m.name)
		if m.ratio != "" {
			b.ReportMetric(v/bs, m.ratio)
		}
		if m.fair != "" {
			b.ReportMetric(v/pbs, m.fair)
		}
	}
}

// BenchmarkWebConvert: HTML made markdown, in bytes of HTML a second
// (b.SetBytes: go test's MB/s column, wall time), and in bytes of HTML a
// second of this process's CPU time (cpu-MB/s: what the work costs,
// whatever else shares the machine's cores).
func BenchmarkWebConvert(b *testing.B) {
	page := []byte(benchPage())
	b.SetBytes(int64(len(page)))
	b.ResetTimer()
	defer cpuRate(b, len(page))()
	for i := 0; i < b.N; i++ {
		if _, _, _, err := convertHTML(page, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWebParse: the part of BenchmarkWebConvert before the
// converter — the page parsed by golang.org/x/net/html, pruned and its
// depth measured — as MB/s and cpu-MB/s: the most the conversion could
// reach with any converter that takes x/net/html's tree.
func BenchmarkWebParse(b *testing.B) {
	page := []byte(benchPage())
	b.SetBytes(int64(len(page)))
	b.ResetTimer()
	defer cpuRate(b, len(page))()
	for i := 0; i < b.N; i++ {
		doc, err := html.Parse(bytes.NewReader(page))
		if err != nil {
			b.Fatal(err)
		}
		prune(doc)
	}
}

// cpuRate reports, when called back, cpu-MB/s: n bytes an op over the
// process's CPU time (user and system, every thread) since cpuRate.
func cpuRate(b *testing.B, n int) func() {
	start := cpuTime(b)
	return func() {
		if d := cpuTime(b) - start; d > 0 {
			b.ReportMetric(float64(n)*float64(b.N)/d.Seconds()/1e6, "cpu-MB/s")
		}
	}
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rawClient is an MCP client of one session over a pipe to the tool's
// server (its call gate included): each call one request line written,
// its answer's line read and decoded once by encoding/json.
type rawClient struct {
	b    testing.TB
	conn io.Writer
	r    *bufio.Reader
	id   int
}

func newRawClient(b testing.TB, tool *Web) *rawClient {
	c1, c2 := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(func() { cancel(); c1.Close() })
	go tool.MCP().Run(ctx, Gate(&mcp.IOTransport{Reader: c2, Writer: c2}, 0))
	return startRaw(b, c1, c1)
}

// newProcClient is a rawClient of the program bin run with args, over
// its stdin and stdout (pipes).
func newProcClient(b testing.TB, bin string, args ...string) *rawClient {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close(); cmd.Wait() })
	return startRaw(b, w, r)
}

func startRaw(b testing.TB, w io.Writer, r io.Reader) *rawClient {
	c := &rawClient{b: b, conn: w, r: bufio.NewReaderSize(r, 64<<10)}
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	c.read()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// getter is the fair baseline's client: this test binary run as
// `http-get` ([runHTTPGet]), asked for a URL a line on its stdin.
type getter struct {
	b testing.TB
	w io.Writer
	r *bufio.Reader
}

func newGetter(b testing.TB) *getter {
	cmd := exec.Command(os.Args[0], "http-get")
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close(); cmd.Wait() })
	return &getter{b: b, w: w, r: bufio.NewReaderSize(r, 64<<10)}
}

// get asks for u and reads the page back whole.
func (g *getter) get(u string) []byte {
	if _, err := io.WriteString(g.w, u+"\n"); err != nil {
		g.b.Fatal(err)
	}
	var n [8]byte
	if _, err := io.ReadFull(g.r, n[:]); err != nil {
		g.b.Fatal(err)
	}
	body := make([]byte, binary.BigEndian.Uint64(n[:]))
	if _, err := io.ReadFull(g.r, body); err != nil {
		g.b.Fatal(err)
	}
	return body
}

func (c *rawClient) send(line string) {
	if _, err := io.WriteString(c.conn, line+"\n"); err != nil {
		c.b.Fatal(err)
	}
}

func (c *rawClient) read() []byte {
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		c.b.Fatal(err)
	}
	return line
}

// fetch calls fetch of u and decodes the answer.
func (c *rawClient) fetch(u string) string {
	text, _ := c.fetchLine(u)
	return text
}

// fetchLine calls fetch of u: the answer's text, and its line as written.
func (c *rawClient) fetchLine(u string) (string, []byte) {
	c.id++
	q, _ := json.Marshal(u)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fetch","arguments":{"url":%s}}}`, c.id, q))
	line := c.read()
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &resp); err != nil || resp.ID != c.id || resp.Result.IsError || len(resp.Result.Content) != 1 {
		c.b.Fatalf("raw fetch of %s: %+v %v", u, resp, err)
	}
	return resp.Result.Content[0].Text, line
}
