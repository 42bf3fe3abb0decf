package namespace

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tests' providers, built with the official go-sdk: the test binary
// runs one on stdio when LNK_TEST_NS_PROVIDER names it.
func TestMain(m *testing.M) {
	if name := os.Getenv("LNK_TEST_NS_PROVIDER"); name != "" {
		runProvider(name)
		return
	}
	os.Exit(m.Run())
}

type searchIn struct {
	Query string `json:"query"`
	Limit int    `json:"limit,omitempty"`
}

type tagSearchIn struct {
	Query string `json:"query"`
	Tag   string `json:"tag,omitempty"`
}

type createIn struct {
	Title string `json:"title"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func runProvider(name string) {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: os.Getenv("LNK_TEST_NS_VERSION")}, nil)
	who := name + os.Getenv("LNK_TEST_NS_VERSION")
	if name == "alpha" {
		mcp.AddTool(s, &mcp.Tool{Name: "search"}, func(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
			return text(who + " found " + in.Query), nil, nil
		})
	} else {
		mcp.AddTool(s, &mcp.Tool{Name: "find"}, func(ctx context.Context, _ *mcp.CallToolRequest, in tagSearchIn) (*mcp.CallToolResult, any, error) {
			return text(who + " found " + in.Query + " tagged " + in.Tag), nil, nil
		})
	}
	mcp.AddTool(s, &mcp.Tool{Name: name + "_create"}, func(ctx context.Context, _ *mcp.CallToolRequest, in createIn) (*mcp.CallToolResult, any, error) {
		return text(who + " created " + in.Title), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "env"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		var names []string
		for _, kv := range os.Environ() {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		return text(strings.Join(names, ",")), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hang"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "provider:", err)
		os.Exit(1)
	}
}
