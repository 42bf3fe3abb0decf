package toolbridge

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runSandboxedClient is the tests' client inside a real sandbox: the test
// binary run as `mcp-client`. It reads $LNK_TOOL_TEST, reaches the tool
// through the sandbox's proxy with the official go-sdk client, and prints
// one line per step for the test to read.
func runSandboxedClient() int {
	url := os.Getenv("LNK_TOOL_TEST")
	if url == "" {
		fmt.Println("no LNK_TOOL_TEST")
		return 2
	}
	fmt.Println("url-prefix=" + url[:strings.Index(url, "/_link/")])
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sampled := false
	client := mcp.NewClient(&mcp.Implementation{Name: "sandboxed", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			sampled = true
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "leaked"}, Model: "m", Role: "assistant"}, nil
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		fmt.Println("connect-error=" + err.Error())
		return 1
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		fmt.Println("list-error=" + err.Error())
		return 1
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	fmt.Println("tools=" + strings.Join(names, ","))
	for _, call := range []struct{ name, text string }{{"echo", "argument-echo-7f3a"}, {"delete", "argument-delete-9c1e"}, {"sample", ""}, {"env", ""}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.name, Arguments: map[string]any{"text": call.text}})
		switch {
		case err != nil:
			fmt.Printf("%s-error=%s\n", call.name, oneLine(err.Error()))
		case res.IsError || len(res.Content) == 0:
			fmt.Printf("%s-refused=%v\n", call.name, res.Content)
		default:
			fmt.Printf("%s=%s\n", call.name, oneLine(res.Content[0].(*mcp.TextContent).Text))
		}
	}
	fmt.Printf("sampled=%v\n", sampled)
	// The route with another secret, and a tool this sandbox was not
	// granted, through the same proxy.
	base, _, _ := strings.Cut(url, "/_link/s/")
	_, rest, _ := strings.Cut(url, "/_link/s/")
	secret, _, _ := strings.Cut(rest, "/")
	fmt.Printf("other-secret=%d\n", statusOf(base+"/_link/s/"+strings.Repeat("0", len(secret))+"/mcp/test"))
	fmt.Printf("not-granted=%d\n", statusOf(strings.TrimSuffix(url, "/test")+"/other"))
	fmt.Printf("other-vars=%v\n", os.Getenv("LNK_TOOL_OTHER") != "")
	return 0
}

func statusOf(url string) int {
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	if err != nil {
		return -1
	}
	resp.Body.Close()
	return resp.StatusCode
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// runSandboxedCalls is the tests' client making only the calls named
// after `mcp-calls`, in order, one line each: NAME=its text, or
// NAME-refused= / NAME-error= with why.
func runSandboxedCalls(names []string) int {
	url := os.Getenv("LNK_TOOL_TEST")
	if url == "" {
		fmt.Println("no LNK_TOOL_TEST")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sandboxed", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		fmt.Println("connect-error=" + err.Error())
		return 1
	}
	defer cs.Close()
	for _, name := range names {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "asked-" + name}})
		switch {
		case err != nil:
			fmt.Printf("%s-error=%s\n", name, oneLine(err.Error()))
		case res.IsError || len(res.Content) == 0:
			var why []string
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					why = append(why, tc.Text)
				}
			}
			fmt.Printf("%s-refused=%s\n", name, oneLine(strings.Join(why, " ")))
		default:
			fmt.Printf("%s=%s\n", name, oneLine(res.Content[0].(*mcp.TextContent).Text))
		}
	}
	return 0
}

// runSandboxedHold is the tests' client that calls echo once, says
// READY, starts a call of each tool named (not waiting for it: a call
// that asks the owner waits for the answer), and holds its session (so
// the tool server runs) until its stdin ends.
func runSandboxedHold(calls []string) int {
	url := os.Getenv("LNK_TOOL_TEST")
	if url == "" {
		fmt.Println("no LNK_TOOL_TEST")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sandboxed", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		fmt.Println("connect-error=" + err.Error())
		return 1
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "held"}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		fmt.Printf("echo-error=%v %v\n", err, res)
		return 1
	}
	fmt.Println("READY")
	for _, name := range calls {
		go cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "held-" + name}})
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}
