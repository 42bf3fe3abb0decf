package toolbridge

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server/discover outside a session is answered "method not found" by
// the bridge itself: no session, no server, no log line, no refusal
// counted. The controls: another method outside a session, and a
// server/discover for a tool not granted, are each still refused and
// logged once.
func TestServerDiscoverIsNotOffered(t *testing.T) {
	r := newRig(t, askNone, Settings{})
	st, sid, body := r.post("test", "", `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if st != http.StatusOK || sid != "" || !strings.Contains(body, `"id":7`) || !strings.Contains(body, `"code":-32601`) {
		t.Fatalf("server/discover: %d %q %s", st, sid, body)
	}
	if n := r.bridge.Sessions(); n != 0 {
		t.Errorf("server/discover left %d sessions, want none", n)
	}
	if ev := r.logged(); len(ev) != 0 || r.bridge.Refused() != 0 {
		t.Errorf("server/discover was logged %+v, counted %d refusals", ev, r.bridge.Refused())
	}

	// Refusals beside it are as they were, each logged once.
	if st, _, body := r.post("test", "", `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`); st != http.StatusBadRequest || !strings.Contains(body, "no session") {
		t.Fatalf("tools/list outside a session: %d %s", st, body)
	}
	if st, _, body := r.post("other", "", `{"jsonrpc":"2.0","id":9,"method":"server/discover"}`); st != http.StatusForbidden || !strings.Contains(body, "not granted") {
		t.Fatalf("server/discover of a tool not granted: %d %s", st, body)
	}
	// A server/discover without an id is no request: no session, refused.
	if st, _, _ := r.post("test", "", `{"jsonrpc":"2.0","method":"server/discover"}`); st != http.StatusBadRequest {
		t.Fatalf("server/discover without an id: %d", st)
	}
	var refused []string
	for _, e := range r.logged() {
		if strings.HasPrefix(e.Outcome, "refused") {
			refused = append(refused, e.Tool+" "+e.Call+": "+e.Outcome)
		}
	}
	want := []string{"test tools/list: refused: no session", "other : refused: not granted", "test server/discover: refused: no session"}
	if strings.Join(refused, "|") != strings.Join(want, "|") {
		t.Errorf("refusals logged %q, want %q", refused, want)
	}
	if n := r.bridge.Sessions(); n != 0 {
		t.Errorf("%d sessions open, want none", n)
	}
}

// The go-sdk's client at its default protocol version (server/discover
// first) starts its session through the bridge with no refusal logged:
// the discover is answered "method not found", the client falls back to
// initialize, and the session lists and calls.
func TestGoSDKDefaultVersionStartsWithoutARefusal(t *testing.T) {
	r := newRig(t, askNone, Settings{})
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", r.sock)
	}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sandboxed", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://127.0.0.1/mcp/test", HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "through"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "through" {
		t.Fatalf("CallTool: %v %v", res, err)
	}
	inits := 0
	for _, e := range r.logged() {
		if strings.HasPrefix(e.Outcome, "refused") {
			t.Errorf("the bridge refused %q: %s", e.Call, e.Outcome)
		}
		if e.Call == "initialize" && e.Outcome == "passed" {
			inits++
		}
	}
	if inits != 1 || r.bridge.Refused() != 0 {
		t.Errorf("%d sessions started with initialize (want 1), %d refusals counted: %+v", inits, r.bridge.Refused(), r.logged())
	}
}
