package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// peer is a real go-sdk MCP server over Streamable HTTP on loopback,
// recording what reached it.
type peer struct {
	URL string
	srv *httptest.Server

	mu       sync.Mutex
	calls    []seenCall
	sessions map[string]bool // every session that made a call
	requests int             // HTTP requests of any kind
	deletes  int             // sessions ended by the client (DELETE)
	lists    int
}

// seenCall is one call as the server saw it.
type seenCall struct {
	Name    string
	Args    string
	Meta    map[string]any
	Session string
}

// held is a peer's hold: startPeer closes it when the test ends, before
// its server closes (which waits for every request in flight).
func held() chan struct{} { return make(chan struct{}) }

// peerOpts shape a peer.
type peerOpts struct {
	tools    []*mcp.Tool
	handler  func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
	pageSize int
	hold     chan struct{} // when set, no request is answered before it is closed
	// listHook rewrites each tools/list result (a page twice, …).
	listHook func(*mcp.ListToolsResult)
}

// echo answers a call with its name and arguments.
func echo(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Params.Name + " " + string(req.Params.Arguments)}}}, nil
}

// objSchema is the smallest input schema.
var objSchema = json.RawMessage(`{"type":"object"}`)

// call is a tool with a name and the smallest schema.
func call(name string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: "the call " + name, InputSchema: objSchema}
}

func startPeer(t testing.TB, o peerOpts) *peer {
	t.Helper()
	p := &peer{sessions: map[string]bool{}}
	if o.handler == nil {
		o.handler = echo
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "test-tool", Version: "1"}, &mcp.ServerOptions{PageSize: o.pageSize})
	for _, tl := range o.tools {
		s.AddTool(tl, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p.mu.Lock()
			p.calls = append(p.calls, seenCall{Name: req.Params.Name, Args: string(req.Params.Arguments), Meta: req.Params.Meta, Session: req.Session.ID()})
			p.sessions[req.Session.ID()] = true
			p.mu.Unlock()
			return o.handler(ctx, req)
		})
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/list" {
				p.mu.Lock()
				p.lists++
				p.mu.Unlock()
				if lr, ok := res.(*mcp.ListToolsResult); ok && o.listHook != nil && err == nil {
					o.listHook(lr)
				}
			}
			return res, err
		}
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.requests++
		if r.Method == http.MethodDelete {
			p.deletes++
		}
		p.mu.Unlock()
		if o.hold != nil {
			select {
			case <-o.hold:
			case <-r.Context().Done():
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	if o.hold != nil {
		t.Cleanup(func() { close(o.hold) }) // runs before p.srv.Close
	}
	p.URL = p.srv.URL + "/_link/tool/" + strings.ReplaceAll(t.Name(), "/", "_")
	return p
}

func (p *peer) seen() []seenCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seenCall(nil), p.calls...)
}

func (p *peer) counts() (requests, deletes, lists int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests, p.deletes, p.lists
}

// logBuf collects log lines.
type logBuf struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuf) logf(format string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, a...))
}

// has reports a line holding every part.
func (l *logBuf) has(parts ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// newSet makes a Set of tools (name → URL) with settings st, direct HTTP.
func newSet(t testing.TB, agentID string, st Settings, log *logBuf, tools ...Tool) *Set {
	t.Helper()
	h, err := ProxyClient(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{AgentID: agentID, Tools: tools, Settings: st, HTTP: h, Logf: log.logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// offerNames are a turn's offered names.
func offerNames(tt *Turn) []string {
	var out []string
	for _, o := range tt.Offers() {
		out = append(out, o.Name)
	}
	return out
}
