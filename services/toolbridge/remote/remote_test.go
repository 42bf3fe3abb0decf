package remote

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/testenv"
)

type in struct {
	Text string `json:"text,omitempty"`
}

// hangCancelled hears of each call to the hang tool the server saw
// cancelled.
var hangCancelled = make(chan struct{}, 4)

// server is a streamable-HTTP MCP server on loopback that wants a bearer
// token, answering in JSON or in server-sent events.
func server(t *testing.T, jsonAnswers bool) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote-test", Version: "1"}, nil)
	// hang answers only once its call is cancelled.
	mcp.AddTool(s, &mcp.Tool{Name: "hang"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
			hangCancelled <- struct{}{}
			return nil, nil, ctx.Err()
		case <-time.After(20 * time.Second):
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "never cancelled"}}}, nil, nil
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "remote " + a.Text}}}, nil, nil
	})
	// ping asks the client something (a ping) before it answers: the
	// request goes out inside the call's own answer stream.
	mcp.AddTool(s, &mcp.Tool{Name: "ping"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		err := req.Session.Ping(ctx, nil)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("pinged: %v", err)}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: jsonAnswers})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-1" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestGoSDKClientThroughLnkMcpRemote(t *testing.T) {
	for _, jsonAnswers := range []bool{true, false} {
		ts := server(t, jsonAnswers)
		cmd := exec.Command(testenv.Bin(t, "lnk-mcp-remote"), ts.URL+"/mcp")
		cmd.Env = []string{"LNK_MCP_HEADER_1=Authorization: Bearer tok-1"}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.Content[0].(*mcp.TextContent).Text != "remote hi" {
			t.Fatalf("json=%v: %v %v", jsonAnswers, res, err)
		}
		cs.Close()
	}
}

func TestHeadersComeFromTheEnvironmentAndURLsAreChecked(t *testing.T) {
	c, err := FromEnv("https://mcp.example/x", []string{"LNK_MCP_HEADER_2=X-B: 2", "LNK_MCP_HEADER_1=Authorization: Bearer t", "OTHER=1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Headers) != 2 || c.Headers[0][0] != "Authorization" || c.Headers[1] != [2]string{"X-B", "2"} {
		t.Errorf("headers %q", c.Headers)
	}
	for _, u := range []string{"http://example.com/", "http://192.168.1.1/", "file:///etc/passwd"} {
		if _, err := FromEnv(u, nil); err == nil {
			t.Errorf("FromEnv(%q) accepted", u)
		}
	}
	if _, err := FromEnv("https://x/", []string{"LNK_MCP_HEADER_1=novalue"}); err == nil {
		t.Error("a header without a colon was accepted")
	}
}

func TestAWrongTokenIsAnErrorThatShowsNoHeader(t *testing.T) {
	ts := server(t, true)
	c, err := FromEnv(ts.URL+"/mcp", []string{"LNK_MCP_HEADER_1=Authorization: Bearer wrong-secret"})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	c.Run(context.Background(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n"), &out)
	if !strings.Contains(out.String(), "401") || strings.Contains(out.String(), "wrong-secret") {
		t.Errorf("answer %q", out.String())
	}
}

// A request of the server's inside the answer to a call (its event
// stream still open, the server waiting) reaches the client at once, and
// the client's answer reaches the server beside the call in flight: the
// call ends, rather than waiting out the HTTP timeout.
func TestAServersRequestInsideAnAnswerIsPassedAndAnswered(t *testing.T) {
	ts := server(t, false)
	cmd := exec.Command(testenv.Bin(t, "lnk-mcp-remote"), ts.URL+"/mcp")
	cmd.Env = []string{"LNK_MCP_HEADER_1=Authorization: Bearer tok-1"}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "pinged: <nil>" {
		t.Fatalf("a call whose server asks the client first: %v %v", res, err)
	}
}

// A client's notifications/cancelled reaches the server while the call
// it cancels is still in flight, not after it, and the session's next
// call is answered at once.
func TestACancelReachesTheServerBesideTheCallInFlight(t *testing.T) {
	ts := server(t, false)
	cmd := exec.Command(testenv.Bin(t, "lnk-mcp-remote"), ts.URL+"/mcp")
	cmd.Env = []string{"LNK_MCP_HEADER_1=Authorization: Bearer tok-1"}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callCtx, stop := context.WithTimeout(ctx, 300*time.Millisecond)
	defer stop()
	if _, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "hang", Arguments: map[string]any{}}); err == nil {
		t.Fatal("the hanging call was answered")
	}
	select {
	case <-hangCancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never heard the call was cancelled")
	}
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "next"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "remote next" {
		t.Fatalf("the call after a cancelled one: %v %v", res, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the call after a cancelled one waited %v", d)
	}
}
