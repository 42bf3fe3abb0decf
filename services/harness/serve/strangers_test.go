package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/model"
)

// offered is a model.Client around the real built-in model's client that
// keeps the tools each request offered.
type offered struct {
	model.Client
	mu    sync.Mutex
	tools [][]string
}

func (o *offered) Complete(ctx context.Context, r model.Request, onText func(string)) (model.Response, error) {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	o.mu.Lock()
	o.tools = append(o.tools, names)
	o.mu.Unlock()
	return o.Client.Complete(ctx, r, onText)
}

func (o *offered) last() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.tools[len(o.tools)-1]
}

// toolServer is a real MCP server on loopback offering one call.
func toolServer(t *testing.T, call string) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-tool", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: call, Description: "the call " + call, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/_link/tool/" + call
}

// TestStrangersGetOnlyTheirTools: an agent with run, file and gh, whose
// [tools] strangers names file: a stranger's turn (a webhook's post) is
// offered file's calls alone, never run's; with strangers unsaid, none
// at all; the owner's turn beside them (the positive control) is offered
// every tool. Through the real store, tool sessions over MCP and the
// built-in model.
func TestStrangersGetOnlyTheirTools(t *testing.T) {
	srv := httptest.NewServer(builtin.Handler(builtin.Options{}))
	defer srv.Close()
	id := strings.Repeat("c3", 16)
	env := map[string]string{
		"LNK_TOOL_RUN":  toolServer(t, "command"),
		"LNK_TOOL_FILE": toolServer(t, "read"),
		"LNK_TOOL_GH":   toolServer(t, "search"),
	}
	all := []string{"file__read", "gh__search", "run__command"}
	for _, tc := range []struct {
		strangers []string
		want      []string
	}{
		{[]string{"file-" + id}, []string{"file__read"}},
		{nil, nil},
	} {
		c := &config.Config{AgentID: id, Owner: "ana", Name: "main", Key: config.NewKey(), Port: 20000, AgentDir: agentDir(t, "words"),
			Model:     config.Model{Format: "openai", BaseURL: srv.URL + "/v1", Model: builtin.ModelName, Key: "placeholder"},
			Tools:     map[string]string{"run-" + id: "LNK_TOOL_RUN", "file-" + id: "LNK_TOOL_FILE", "gh": "LNK_TOOL_GH"},
			Strangers: tc.strangers}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
		m, err := model.New(model.Endpoint{Format: "openai", BaseURL: srv.URL + "/v1", Key: "placeholder", Model: builtin.ModelName})
		if err != nil {
			t.Fatal(err)
		}
		rec := &offered{Client: m}
		a, err := Open(c, Options{Model: rec, Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := a.Turn(ctx, endpoint.Message{Thread: "webhook-deploys", Text: "hello", From: "stranger:webhook:deploys"}, nil); err != nil {
			t.Fatal(err)
		}
		if got := rec.last(); !slices.Equal(got, tc.want) {
			t.Errorf("strangers %q: a stranger's turn was offered %q, want %q", tc.strangers, got, tc.want)
		}
		if _, err := a.Turn(ctx, endpoint.Message{Thread: "main", Text: "hello"}, nil); err != nil {
			t.Fatal(err)
		}
		if got := rec.last(); !slices.Equal(got, all) {
			t.Errorf("the owner's turn was offered %q, want %q", got, all)
		}
		a.Close()
	}
}
