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

// The official go-sdk client, over streamable HTTP, lists and calls
// through the bridge; a server's request for a model never reaches it.
func TestGoSDKClientThroughTheBridge(t *testing.T) {
	r := newRig(t, askNone, Settings{})
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", r.sock)
	}}}
	sampled := false
	client := mcp.NewClient(&mcp.Implementation{Name: "sandboxed", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			sampled = true
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "leaked"}, Model: "m", Role: "assistant"}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://127.0.0.1/mcp/test", HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 6 {
		t.Fatalf("ListTools: %v %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "through"}})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "through" {
		t.Fatalf("CallTool: %v %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "sample", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if sampled || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "refused outside") {
		t.Errorf("a server's sampling request reached the client (%v): %v", sampled, res.Content[0])
	}
}
