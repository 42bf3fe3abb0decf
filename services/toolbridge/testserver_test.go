package toolbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/toolrefusal"
)

// The tests' own MCP server, built with the official go-sdk: the test
// binary runs it on stdio when LNK_TEST_MCP_SERVER=1.
func TestMain(m *testing.M) {
	if os.Getenv("LNK_TEST_MCP_SERVER") == "1" {
		runTestServer()
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "mcp-client" {
		os.Exit(runSandboxedClient())
	}
	if len(os.Args) > 1 && os.Args[1] == "mcp-calls" {
		os.Exit(runSandboxedCalls(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "mcp-hold" {
		os.Exit(runSandboxedHold(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "mcp-bench" {
		os.Exit(runBenchCaller(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "mcp-bench-url" {
		os.Exit(runBenchURL())
	}
	if len(os.Args) > 1 && os.Args[1] == "mcp-bench-direct" {
		os.Exit(runBenchDirect(os.Args[2:]))
	}
	os.Exit(m.Run())
}

type echoIn struct {
	Text string `json:"text,omitempty"`
}

func runTestServer() {
	began := time.Now()
	if d := os.Getenv("LNK_TEST_START_DELAY"); d != "" {
		if dur, err := time.ParseDuration(d); err == nil {
			time.Sleep(dur)
		}
	}
	if f := os.Getenv("LNK_TEST_STARTS"); f != "" {
		// One line a start, "began ended" in Unix nanoseconds (one
		// O_APPEND write each), for a test to count the starts at once.
		appendLine(f, fmt.Sprintf("%d %d", began.UnixNano(), time.Now().UnixNano()))
	}
	if f := os.Getenv("LNK_TEST_PIDS"); f != "" {
		appendLine(f, strconv.Itoa(os.Getpid())) // one line a server, for a test to see it end
	}
	in := io.ReadCloser(os.Stdin)
	if f := os.Getenv("LNK_TEST_RECORD"); f != "" {
		// Every byte the server reads, for a test to see what reached it.
		rec, err := os.OpenFile(f, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		in = io.NopCloser(io.TeeReader(os.Stdin, rec))
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "lnk-test", Version: "1"}, nil)
	yes := true
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "says it back", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "delete", Description: "pretends to delete", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted " + in.Text}}}, nil, nil
		})
	if os.Getenv("LNK_TEST_REFUSE") == "1" {
		mcp.AddTool(s, &mcp.Tool{Name: "refuse", Description: "refuses as Link's own tools do, its text the reason"},
			func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{IsError: true, Meta: toolrefusal.Meta(in.Text), Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "names its environment"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			var names []string
			for _, kv := range os.Environ() {
				k, _, _ := strings.Cut(kv, "=")
				names = append(names, k)
			}
			sort.Strings(names)
			wd, _ := os.Getwd()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "cwd=" + wd + " env=" + strings.Join(names, ",")}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "asks the client for a model"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			caps, _ := json.Marshal(req.Session.InitializeParams().Capabilities)
			_, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("client capabilities %s; sampling answered: %v", caps, err)}}}, nil, nil
		})
	if os.Getenv("LNK_TEST_BIG") == "1" {
		mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "answers with as many bytes as its text says"},
			func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
				n, err := strconv.Atoi(in.Text)
				if err != nil {
					return nil, nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", n)}}}, nil, nil
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "answers after a while"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			time.Sleep(300 * time.Millisecond)
			if f := os.Getenv("LNK_TEST_MARK"); f != "" {
				os.WriteFile(f, []byte(in.Text), 0o600)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow " + in.Text}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "waits until cancelled"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			// LNK_TEST_WAITS names a folder: one line a call in the file
			// named by its text, "started", then "cancelled" or "done".
			dir := os.Getenv("LNK_TEST_WAITS")
			appendLine(filepath.Join(dir, in.Text), "started")
			select {
			case <-ctx.Done():
				appendLine(filepath.Join(dir, in.Text), "cancelled")
				return nil, nil, ctx.Err()
			case <-time.After(20 * time.Second):
				appendLine(filepath.Join(dir, in.Text), "done")
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "waited " + in.Text}}}, nil, nil
			}
		})
	s.AddResource(&mcp.Resource{URI: "test://note", Name: "note", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "the note's text"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "a greeting"},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "the prompt's greeting"}}}}, nil
		})
	if err := s.Run(context.Background(), &mcp.IOTransport{Reader: in, Writer: nopWriteCloser{os.Stdout}}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		os.Exit(1)
	}
}

func appendLine(file, line string) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	f.Write([]byte(line + "\n"))
	f.Close()
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
