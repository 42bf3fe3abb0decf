package tools

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/services/harness/model"
)

// TestThroughTheSandboxProxy: the sandbox's real proxy (helpers/netbroker,
// in-process as the relay serves it) in $HTTP_PROXY, with a real go-sdk
// MCP server on its /_link/ routes: the list and the call go through the
// proxy, which logs them; a tool URL elsewhere on loopback (not a route
// of the proxy's) is a request the proxy's rules refuse (no grant of
// that port): that tool is never reached and never offered.
func TestThroughTheSandboxProxy(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	s.AddTool(call("x"), echo)
	rules, err := netbroker.RulesFrom(&netbroker.Grants{AgentName: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []netbroker.Event
	p, err := netbroker.New(netbroker.Config{Rules: rules,
		Routes: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true}),
		Log: func(e netbroker.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e)
		}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Serve(ln); close(done) }()
	t.Cleanup(func() { p.Close(); <-done })
	proxy := "http://" + ln.Addr().String()
	h, err := ProxyClient(func(k string) string {
		switch k {
		case "HTTP_PROXY":
			return proxy
		case "LNK_SANDBOX":
			return "1"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	other := startPeer(t, peerOpts{tools: []*mcp.Tool{call("y")}})
	log := &logBuf{}
	set, err := New(Config{HTTP: h, Logf: log.logf, Tools: []Tool{{Name: "web", URL: proxy + "/_link/tool/web"}, {Name: "direct", URL: other.srv.URL + "/mcp"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	tt := set.Begin(context.Background(), Scope{Thread: "t"})
	r := tt.Call(context.Background(), model.ToolCall{ID: "1", Name: "web__x"})
	tt.End()
	if r.IsError || r.Text != "x {}" {
		t.Fatalf("the call through the proxy: %+v\n%s", r, log)
	}
	if got := offerNames(tt); !slices.Equal(got, []string{"web__x"}) {
		t.Fatalf("offered %v (the tool at a loopback port not granted must be refused by the proxy)\n%s", got, log)
	}
	if req, _, _ := other.counts(); req != 0 {
		t.Fatalf("the tool at a port not granted got %d requests", req)
	}
	mu.Lock()
	defer mu.Unlock()
	var routed, refused int
	for _, e := range events {
		if e.Kind == "route" && e.Decision == "allow" {
			routed++
		}
		if e.Decision != "allow" {
			refused++
		}
	}
	if routed < 4 || refused == 0 {
		t.Fatalf("the proxy's log: %d routed, %d refused: %+v", routed, refused, events)
	}
}
