package tools

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/services/harness/model"
)

// TestSlowToolLeftOut30sBarred5min: a tool that takes over StartTimeout
// (30 s; here a setting) to start, and never listed, is left out of the
// turn and of every turn for BarFor (5 min), not contacted meanwhile; the
// quick tool beside it is offered (the positive control).
func TestSlowToolLeftOut30sBarred5min(t *testing.T) {
	slow := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}, hold: held()})
	quick := startPeer(t, peerOpts{tools: []*mcp.Tool{call("y")}})
	log := &logBuf{}
	s := newSet(t, "", Settings{StartTimeout: time.Second, BarFor: time.Hour, ListEvery: -1}, log,
		Tool{Name: "slow", URL: slow.URL}, Tool{Name: "quick", URL: quick.URL})
	tt := s.Begin(context.Background(), Scope{})
	tt.End()
	if got := offerNames(tt); !slices.Equal(got, []string{"quick__y"}) {
		t.Fatalf("offered %v", got)
	}
	if !log.has("slow left out of every turn", "took over 1s") {
		t.Fatalf("log:\n%s", log)
	}
	before, _, _ := slow.counts()
	tt = s.Begin(context.Background(), Scope{})
	tt.End()
	after, _, _ := slow.counts()
	if got := offerNames(tt); !slices.Equal(got, []string{"quick__y"}) || after != before {
		t.Fatalf("the barred tool: offered %v, %d requests", got, after-before)
	}
}

// TestBarEnds: once BarFor is past, the tool is tried again.
func TestBarEnds(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}})
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		u, _ := url.Parse(p.srv.URL)
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	}))
	defer gate.Close()
	now := time.Now()
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	log := &logBuf{}
	h, _ := ProxyClient(func(string) string { return "" })
	s, err := New(Config{Tools: []Tool{{Name: "web", URL: gate.URL + "/_link/tool/web"}}, HTTP: h, Logf: log.logf,
		Settings: Settings{BarFor: 5 * time.Minute, ListEvery: -1}, Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	if tt := s.Begin(context.Background(), Scope{}); len(tt.Offers()) != 0 {
		t.Fatal("a tool that failed to start was offered")
	}
	down.Store(false)
	clock.Store(now.Add(4 * time.Minute).UnixNano())
	if tt := s.Begin(context.Background(), Scope{}); len(tt.Offers()) != 0 {
		t.Fatal("the tool was offered inside its 5 minutes")
	}
	clock.Store(now.Add(5*time.Minute + time.Second).UnixNano())
	if tt := s.Begin(context.Background(), Scope{}); !slices.Equal(offerNames(tt), []string{"web__x"}) {
		t.Fatalf("after 5 minutes: %v\n%s", offerNames(tt), log)
	}
}

// TestListedBeforeOfferedWhatItListed: a tool that listed before and now
// fails or is slow to list again is offered what it listed, not barred.
func TestListedBeforeOfferedWhatItListed(t *testing.T) {
	var slow atomic.Bool
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}})
	hold := make(chan struct{})
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slow.Load() {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		u, _ := url.Parse(p.srv.URL)
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	}))
	defer gate.Close()
	defer close(hold)
	log := &logBuf{}
	s := newSet(t, "", Settings{StartTimeout: time.Second, ListEvery: -1}, log, Tool{Name: "web", URL: gate.URL + "/_link/tool/web"})
	if tt := s.Begin(context.Background(), Scope{}); !slices.Equal(offerNames(tt), []string{"web__x"}) {
		t.Fatal("the first list")
	}
	slow.Store(true)
	tt := s.Begin(context.Background(), Scope{})
	defer tt.End()
	if !slices.Equal(offerNames(tt), []string{"web__x"}) || !log.has("web", "offered what it listed before") {
		t.Fatalf("offered %v\n%s", offerNames(tt), log)
	}
	// A call to it now fails to start within the turn: an error to the model.
	if r := tt.Call(context.Background(), model.ToolCall{ID: "1", Name: "web__x"}); !r.IsError || !strings.Contains(r.Text, "left out of this turn") {
		t.Fatalf("call: %+v", r)
	}
}

// TestList16PagesOrAPageTwice: a tool that lists more than 16 pages, or a
// page twice, is offered what it listed by then.
func TestList16PagesOrAPageTwice(t *testing.T) {
	var calls []*mcp.Tool
	for i := 0; i < 20; i++ {
		calls = append(calls, call(fmt.Sprintf("c%02d", i)))
	}
	t.Run("more than 16 pages", func(t *testing.T) {
		p := startPeer(t, peerOpts{tools: calls, pageSize: 1})
		log := &logBuf{}
		s := newSet(t, "", Settings{}, log, Tool{Name: "paged", URL: p.URL})
		tt := s.Begin(context.Background(), Scope{})
		defer tt.End()
		if n := len(tt.Offers()); n != 16 || !log.has("paged", "more than 16 pages") {
			t.Fatalf("%d offers\n%s", n, log)
		}
		if _, _, lists := p.counts(); lists != 16 {
			t.Fatalf("%d pages read", lists)
		}
	})
	t.Run("16 pages exactly (the positive control)", func(t *testing.T) {
		p := startPeer(t, peerOpts{tools: calls[:16], pageSize: 1})
		log := &logBuf{}
		s := newSet(t, "", Settings{}, log, Tool{Name: "paged", URL: p.URL})
		tt := s.Begin(context.Background(), Scope{})
		defer tt.End()
		if n := len(tt.Offers()); n != 16 || log.has("pages") {
			t.Fatalf("%d offers\n%s", n, log)
		}
	})
	t.Run("a page twice", func(t *testing.T) {
		var first atomic.Value // the first page's cursor, answered again at every page
		p := startPeer(t, peerOpts{tools: calls, pageSize: 2, listHook: func(r *mcp.ListToolsResult) {
			if r.NextCursor == "" {
				return
			}
			first.CompareAndSwap(nil, r.NextCursor)
			r.NextCursor = first.Load().(string)
		}})
		log := &logBuf{}
		s := newSet(t, "", Settings{}, log, Tool{Name: "loop", URL: p.URL})
		tt := s.Begin(context.Background(), Scope{})
		defer tt.End()
		if n := len(tt.Offers()); n == 0 || n > 4 || !log.has("loop", "a page twice") {
			t.Fatalf("%d offers\n%s", n, log)
		}
	})
}

// TestCallsThroughHTTPProxy: with $HTTP_PROXY set, the list and the call
// go through it, the tool's loopback URL included.
func TestCallsThroughHTTPProxy(t *testing.T) {
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}})
	var through atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		through.Add(1)
		out := r.Clone(r.Context())
		out.RequestURI = ""
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			w.Write(buf[:n])
			w.(http.Flusher).Flush()
			if err != nil {
				return
			}
		}
	}))
	defer proxy.Close()
	h, err := ProxyClient(func(k string) string {
		if k == "HTTP_PROXY" {
			return proxy.URL
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Tools: []Tool{{Name: "web", URL: p.URL}}, HTTP: h})
	if err != nil {
		t.Fatal(err)
	}
	tt := s.Begin(context.Background(), Scope{Thread: "t"})
	r := tt.Call(context.Background(), model.ToolCall{ID: "1", Name: "web__x"})
	tt.End()
	if r.IsError || through.Load() < 4 { // list: initialize, initialized, list; call: the same and the call
		t.Fatalf("result %+v, %d requests through the proxy", r, through.Load())
	}
	if _, err := ProxyClient(func(string) string { return "socks5://127.0.0.1:1" }); err == nil {
		t.Fatal("a proxy that isn't http:// was taken")
	}
	inSandbox := func(k string) string {
		if k == "LNK_SANDBOX" {
			return "1"
		}
		return ""
	}
	if _, err := ProxyClient(inSandbox); err == nil {
		t.Fatal("inside the sandbox, a client with no $HTTP_PROXY was made")
	}
}

// TestToolAnswerPast16MiB: an answer past MaxBody fails the call, said to
// the model; a large one under it comes whole (the positive control).
func TestToolAnswerPast16MiB(t *testing.T) {
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("big"), call("fits")}, handler: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := MaxBody + 1
		if req.Params.Name == "fits" {
			n = 1 << 20
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("a", n)}}}, nil
	}})
	s := newSet(t, "", Settings{}, &logBuf{}, Tool{Name: "web", URL: p.URL})
	tt := s.Begin(context.Background(), Scope{})
	defer tt.End()
	if r := tt.Call(context.Background(), model.ToolCall{ID: "1", Name: "web__fits"}); r.IsError || len(r.Text) != 1<<20 {
		t.Fatalf("1 MiB: error %v, %d bytes", r.IsError, len(r.Text))
	}
	r := tt.Call(context.Background(), model.ToolCall{ID: "2", Name: "web__big"})
	if !r.IsError || !strings.Contains(r.Text, "16 MiB") {
		t.Fatalf("past 16 MiB: %v %.200s", r.IsError, r.Text)
	}
}

// TestRouteSecretNeverSaid: the tool's URL holds the bridge's secret in
// its path; a tool that can't be reached is said in the log and to the
// model without it, its name and why said instead.
func TestRouteSecretNeverSaid(t *testing.T) {
	const secret = "s3cr3tS3cr3tS3cr3tS3cr3t"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	p := startPeer(t, peerOpts{tools: []*mcp.Tool{call("x")}})
	log := &logBuf{}
	s := newSet(t, "", Settings{ListEvery: time.Hour}, log,
		Tool{Name: "gone", URL: "http://" + addr + "/_link/s/" + secret + "/tool/gone"},
		Tool{Name: "bad", URL: "http://127.0.0.1:1/%zz" + secret},
		Tool{Name: "web", URL: p.URL})
	tt := s.Begin(context.Background(), Scope{})
	defer tt.End()
	r := tt.Call(context.Background(), model.ToolCall{ID: "1", Name: "gone__x"})
	if !log.has("gone left out", "failed to start") || !log.has(`"bad" not offered`) {
		t.Fatalf("log:\n%s", log)
	}
	if strings.Contains(log.String(), secret) || strings.Contains(r.Text, secret) {
		t.Fatalf("the route's secret was said:\n%s\n%s", log, r.Text)
	}
	if !slices.Equal(offerNames(tt), []string{"web__x"}) {
		t.Fatalf("offered %v", offerNames(tt))
	}

	// A tool that listed, then went away: its call fails to start.
	q := startPeer(t, peerOpts{tools: []*mcp.Tool{call("y")}})
	s2 := newSet(t, "", Settings{ListEvery: time.Hour}, log, Tool{Name: "later", URL: q.srv.URL + "/_link/s/" + secret + "/tool/later"})
	s2.Begin(context.Background(), Scope{}).End()
	q.srv.Close()
	tt2 := s2.Begin(context.Background(), Scope{})
	defer tt2.End()
	r2 := tt2.Call(context.Background(), model.ToolCall{ID: "2", Name: "later__y"})
	if !r2.IsError || !strings.Contains(r2.Text, "failed to start") || strings.Contains(r2.Text, secret) {
		t.Fatalf("a call to a tool gone: %s", r2.Text)
	}
}
