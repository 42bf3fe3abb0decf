package turn

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/services/harness/builtin"
	"lnk.dev/lnk/services/harness/model"
	"lnk.dev/lnk/services/harness/store"
	"lnk.dev/lnk/services/harness/tools"
)

// wireLog records the requests a model server got, as JSON.
type wireLog struct {
	mu   sync.Mutex
	reqs []oaRequest
}

// oaRequest is the part of a chat-completions request the tests read.
type oaRequest struct {
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		Name       string          `json:"name"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// text is a message's content as text (a string, or parts of text).
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (w *wireLog) all() []oaRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]oaRequest(nil), w.reqs...)
}

// record wraps h, keeping each chat-completions request's body.
func (w *wireLog) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/chat/completions" {
			body, _ := io.ReadAll(r.Body)
			var req oaRequest
			json.Unmarshal(body, &req)
			w.mu.Lock()
			w.reqs = append(w.reqs, req)
			w.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(rw, r)
	})
}

// builtinModel serves the real built-in model on loopback and returns
// the real client of it.
func builtinModel(t testing.TB, o builtin.Options) (model.Client, *wireLog) {
	t.Helper()
	wl := &wireLog{}
	srv := httptest.NewServer(wl.record(builtin.Handler(o)))
	t.Cleanup(srv.Close)
	c, err := model.New(model.Endpoint{Format: model.FormatOpenAI, BaseURL: srv.URL + "/v1", Key: "placeholder", Model: builtin.ModelName})
	if err != nil {
		t.Fatal(err)
	}
	return c, wl
}

// scripted is an OpenAI-compatible server whose answers a test writes:
// the model at its worst (calls past the limits, names never offered),
// which the built-in never is. answer gets each request's number (from
// 0) and the request, and returns the text and the calls (name → args).
type scriptedCall struct{ Name, Args string }

func scriptedModel(t testing.TB, answer func(n int, req oaRequest) (string, []scriptedCall)) (model.Client, *wireLog) {
	t.Helper()
	wl := &wireLog{}
	var mu sync.Mutex
	n := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req oaRequest
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		text, calls := answer(i, req)
		msg := map[string]any{"role": "assistant", "content": text}
		finish := "stop"
		if len(calls) > 0 {
			var tc []map[string]any
			for k, c := range calls {
				tc = append(tc, map[string]any{"id": fmt.Sprintf("call_%d_%d", i, k), "type": "function",
					"function": map[string]any{"name": c.Name, "arguments": c.Args}})
			}
			msg["tool_calls"] = tc
			finish = "tool_calls"
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", i), "object": "chat.completion", "created": 1, "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	})
	srv := httptest.NewServer(wl.record(h))
	t.Cleanup(srv.Close)
	c, err := model.New(model.Endpoint{Format: model.FormatOpenAI, BaseURL: srv.URL + "/v1", Key: "placeholder", Model: "scripted", NoStream: true})
	if err != nil {
		t.Fatal(err)
	}
	return c, wl
}

// toolServer is a real go-sdk MCP server over Streamable HTTP on
// loopback: each call named in answers answers with its function.
type toolServer struct {
	URL  string
	mu   sync.Mutex
	got  []string // "call args" of each call
	meta []map[string]any
}

func startTool(t testing.TB, answers map[string]func(args string) string) *toolServer {
	t.Helper()
	ts := &toolServer{}
	s := mcp.NewServer(&mcp.Implementation{Name: "test-tool", Version: "1"}, nil)
	for name, f := range answers {
		s.AddTool(&mcp.Tool{Name: name, Description: "the call " + name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ts.mu.Lock()
				ts.got = append(ts.got, name+" "+string(req.Params.Arguments))
				ts.meta = append(ts.meta, req.Params.Meta)
				ts.mu.Unlock()
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: f(string(req.Params.Arguments))}}}, nil
			})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(srv.Close)
	ts.URL = srv.URL + "/_link/tool/x"
	return ts
}

func (ts *toolServer) calls() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.got...)
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

func (l *logBuf) has(parts ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
next:
	for _, line := range l.lines {
		for _, p := range parts {
			if !strings.Contains(line, p) {
				continue next
			}
		}
		return true
	}
	return false
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// fixture is an agent's folder with a conversation open in the real store.
type fixture struct {
	dir  string
	conv *store.Conversation
	log  *logBuf
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chats, err := store.OpenChats(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chats.Close() })
	conv, err := chats.Open("main", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conv.Close() })
	return &fixture{dir: dir, conv: conv, log: &logBuf{}}
}

// toolSet is a tools.Set of name → URL (Link's own as <name>-ab12).
func (fx *fixture) toolSet(t testing.TB, tl ...tools.Tool) *tools.Set {
	t.Helper()
	h, err := tools.ProxyClient(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	s, err := tools.New(tools.Config{AgentID: "ab12", Tools: tl, HTTP: h, Logf: fx.log.logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func (fx *fixture) runner(t testing.TB, c Config) *Runner {
	t.Helper()
	c.Logf = fx.log.logf
	r, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (fx *fixture) events(t testing.TB) []store.Event {
	t.Helper()
	ev, err := fx.conv.Events()
	if err != nil {
		t.Fatal(err)
	}
	return ev
}
