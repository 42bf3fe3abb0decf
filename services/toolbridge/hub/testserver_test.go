package hub

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests' MCP server, built with the official go-sdk: the test binary
// runs it on stdio when LNK_TEST_HUB_SERVER=1, and sleeps as its child
// when LNK_TEST_HUB_CHILD=1.
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("LNK_TEST_HUB_CHILD") == "1":
		for {
			time.Sleep(time.Hour)
		}
	case os.Getenv("LNK_TEST_HUB_SERVER") == "deaf":
		runDeafServer()
		return
	case os.Getenv("LNK_TEST_HUB_SERVER") == "1":
		runTestServer()
		return
	}
	os.Exit(m.Run())
}

type textIn struct {
	Text string `json:"text,omitempty"`
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func runTestServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "lnk-hub-test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		return textResult(in.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "progress"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		for i := range 3 {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 3, Message: in.Text})
		}
		return textResult(in.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "big"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		n := 256 << 10
		if in.Text != "" {
			n = atoi(in.Text) // as many bytes as its text says
		}
		return textResult(strings.Repeat("x", n)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "env"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		var names []string
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		sort.Strings(names)
		return textResult(strings.Join(names, ",")), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, err
		}
		c := exec.Command(exe, os.Args[1:]...)
		c.Env = append(os.Environ(), "LNK_TEST_HUB_CHILD=1", "LNK_TEST_HUB_SERVER=0")
		c.SysProcAttr = nil
		if err := c.Start(); err != nil {
			return nil, nil, err
		}
		return textResult(fmt.Sprint(c.Process.Pid)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "grow"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: "grown-" + in.Text}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return textResult("grown"), nil, nil
		})
		return textResult("grew"), nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		os.Exit(1)
	}
}

// runDeafServer answers initialize, then reads nothing more and writes
// 20000 pings and a list_changed: a hub whose reader wrote to it would
// stall before the list_changed.
func runDeafServer() {
	br := bufio.NewReader(os.Stdin)
	line, _ := br.ReadBytes('\n')
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(line, &m)
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"deaf","version":"1"}}}`+"\n", m.ID)
	for i := range 20000 {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
	}
	fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	w.Flush()
	for {
		time.Sleep(time.Hour)
	}
}
