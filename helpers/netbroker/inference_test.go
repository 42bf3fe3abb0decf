package netbroker

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestFilterInference(t *testing.T) {
	refused := []struct{ method, path, body string }{
		{"GET", "/v1/files", ""},
		{"POST", "/v1/files", "{}"},
		{"POST", "/v1/batches", "{}"},
		{"GET", "/v1/organizations/me", ""},
		{"POST", "/api/pull", `{"name":"llama3"}`},
		{"DELETE", "/api/delete", `{"name":"llama3"}`},
		{"POST", "/api/create", `{}`},
		{"POST", "/v1/messages/../files", `{}`},
		{"POST", "/v1/messages", `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"http://169.254.169.254/"}}]}]}`},
		{"POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://evil.test/x.png"}}]}]}`},
		{"POST", "/v1/responses", `{"input":[{"role":"user","content":[{"type":"input_file","file_url":"https://evil.test/a.pdf"}]}]}`},
		{"POST", "/v1/messages", `not json`},
	}
	for _, r := range refused {
		if _, err := FilterInference(r.method, r.path, []byte(r.body)); err == nil {
			t.Errorf("%s %s %s passed", r.method, r.path, r.body)
		}
	}
	body := `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}],
		"tools":[{"type":"web_search_20250305","name":"web_search"},{"type":"function","function":{"name":"f"}},{"name":"local","input_schema":{}},
		{"type":"code_execution_20250522"},{"type":"web_fetch_20250910"}],"mcp_servers":[{"url":"https://evil.test/mcp"}]}`
	out, err := FilterInference("POST", "/v1/messages?beta=true", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(out, &got)
	if _, ok := got["mcp_servers"]; ok {
		t.Errorf("mcp_servers kept: %s", out)
	}
	if tools := got["tools"].([]any); len(tools) != 2 {
		t.Errorf("tools kept: %v", tools)
	}
	if out, err := FilterInference("POST", "/v1/chat/completions", []byte(`{"model":"m","seed":12345678901234567891,"messages":[]}`)); err != nil || !strings.Contains(string(out), `"seed":12345678901234567891`) {
		t.Errorf("a number was not kept as written: %v %s", err, out)
	}
	for _, bad := range []string{`{"model":"m"} {"x":1}`, `null`, `[]`} {
		if _, err := FilterInference("POST", "/v1/messages", []byte(bad)); err == nil {
			t.Errorf("%s passed as a JSON object", bad)
		}
	}
	// Anthropic names an MCP server with {"type":"url"}: it is removed
	// with the server, not refused as a URL to fetch.
	f, err := filterInference("POST", "/v1/messages", []byte(`{"model":"m","mcp_servers":[{"type":"url","url":"https://evil.test/sse","name":"x"}],"tools":[{"type":"mcp_toolset","mcp_server_name":"x"}]}`))
	if err != nil || f.removed != 2 || strings.Contains(string(f.body), "evil.test") {
		t.Errorf("an MCP server by URL: %v, %d removed, %s", err, f.removed, f.body)
	}
	for _, ok := range [][2]string{{"GET", "/v1/models"}, {"POST", "/v1/embeddings"}, {"GET", "/api/tags"}} {
		if _, err := FilterInference(ok[0], ok[1], nil); err != nil {
			t.Errorf("%s %s: %v", ok[0], ok[1], err)
		}
	}
}

// A local model behind the proxy: inference passes, a search is
// refused, its admin API gets a 403, and CONNECT to it is refused.
func TestLocalModelInferenceOnly(t *testing.T) {
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s", r.URL.Path, b)
	}))
	t.Cleanup(model.Close)
	port := portOf(t, model.Listener)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{port}}, func(c *Config) { c.LocalModelPorts = []uint16{port} })
	chat := `{"model":"m","messages":[]}`
	resp, body, _, _ := tp.ask(t, fmt.Sprintf("POST http://localhost:%d/api/chat HTTP/1.1\r\nHost: localhost:%d\r\nContent-Length: %d\r\n\r\n%s", port, port, len(chat), chat))
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "/api/chat {") {
		t.Fatalf("inference: %s %q", resp.Status, body)
	}
	search := `{"model":"m","messages":[],"plugins":[{"id":"web"}]}`
	resp, body, _, _ = tp.ask(t, fmt.Sprintf("POST http://localhost:%d/v1/chat/completions HTTP/1.1\r\nHost: localhost:%d\r\nContent-Length: %d\r\n\r\n%s", port, port, len(search), search))
	if resp.StatusCode != 403 || !strings.Contains(body, "search or fetch") {
		t.Fatalf("a search: %s %q", resp.Status, body)
	}
	resp, body, _, _ = tp.ask(t, fmt.Sprintf("POST http://127.0.0.1:%d/api/pull HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 2\r\n\r\n{}", port, port))
	if resp.StatusCode != 403 || !strings.Contains(body, "inference only") {
		t.Fatalf("admin API: %s %q", resp.Status, body)
	}
	if resp, _, _, _ := tp.ask(t, fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port)); resp.StatusCode != 403 {
		t.Fatalf("CONNECT to the model: %s", resp.Status)
	}
}
