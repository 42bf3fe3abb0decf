package netbroker

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzParseTarget: a parsed target has a host for a tunnel or forward,
// a port, and a route only under RoutePrefix.
func FuzzParseTarget(f *testing.F) {
	f.Add("CONNECT", "example.com:443")
	f.Add("GET", "http://u@example.com/")
	f.Add("GET", "/_link/s/x/mcp/y")
	f.Add("GET", "http://[::1]:80/?q#f")
	f.Fuzz(func(t *testing.T, method, uri string) {
		tg, err := ParseTarget(method, uri)
		if err != nil {
			return
		}
		switch tg.Kind {
		case Tunnel, Forward:
			if tg.Port == 0 || tg.Host == (Host{}) {
				t.Fatalf("%s %q gave %+v", method, uri, tg)
			}
			if strings.Contains(tg.Path, "#") {
				t.Fatalf("%q kept a fragment", uri)
			}
		case Route:
			if !strings.HasPrefix(tg.Path, RoutePrefix) || strings.Contains(tg.Path, "/../") {
				t.Fatalf("route %q", tg.Path)
			}
		default:
			t.Fatalf("%s %q: no kind", method, uri)
		}
	})
}

// FuzzPatternMatch: a wildcard never matches its bare domain or a name
// that doesn't end in "." and that domain.
func FuzzPatternMatch(f *testing.F) {
	f.Add("*.example.com", "api.example.com")
	f.Add("*.example.com", "evil-example.com")
	f.Add("example.com", "EXAMPLE.com.")
	f.Fuzz(func(t *testing.T, pattern, host string) {
		p, err := ParsePattern(pattern)
		if err != nil {
			return
		}
		h, err := ParseHost(host)
		if err != nil || !p.Match(h) {
			return
		}
		if rest, ok := strings.CutPrefix(p.String(), "*"); ok {
			if h.IsAddr() || !strings.HasSuffix(h.Name, rest) || h.Name == rest[1:] {
				t.Fatalf("%s matched %q", p, h)
			}
		} else if h.String() != p.String() {
			t.Fatalf("%s matched %q", p, h)
		}
	})
}

// FuzzFilterInference: whatever passes is an inference call, and a JSON
// body that passes holds only its call's fields, none that searches, no
// model that searches on its own, no mcp_servers, and only the tools the
// agent runs itself.
func FuzzFilterInference(f *testing.F) {
	f.Add("POST", "/v1/messages", []byte(`{"tools":[{"type":"web_search_1"}],"mcp_servers":[]}`))
	f.Add("POST", "/v1/chat/completions", []byte(`{"messages":[{"content":[{"image_url":{"url":"https://x"}}]}]}`))
	f.Add("GET", "/v1/models", []byte(nil))
	f.Add("POST", "/v1/chat/completions", []byte(`{"model":"m","messages":[],"web_search_options":{}}`))
	f.Add("POST", "/v1/chat/completions", []byte(`{"model":"openai/gpt-4o:online","messages":[],"plugins":[{"id":"web"}]}`))
	f.Add("POST", "/v1/responses", []byte(`{"model":"m","input":"x","tools":[{"type":"x_search"},{"type":"function","name":"f"}],"extra":1}`))
	f.Fuzz(func(t *testing.T, method, path string, body []byte) {
		out, err := FilterInference(method, path, body)
		if err != nil {
			return
		}
		p, _, _ := strings.Cut(path, "?")
		api, ok := inferenceAPIs[method+" "+p]
		if !ok {
			t.Fatalf("%s %s passed, not an inference call", method, path)
		}
		if api.NoBody || api.Multipart || len(body) == 0 {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("what passed is not a JSON object: %s", out)
		}
		for k := range m {
			if !slices.Contains(api.Fields, k) {
				t.Fatalf("%s passed, not in %s %s's list: %s", k, method, p, out)
			}
		}
		if model, ok := m["model"].(string); ok && searchingModel(model) != "" {
			t.Fatalf("a model that searches passed: %s", out)
		}
		if tools, ok := m["tools"].([]any); ok {
			for _, tl := range tools {
				if !isClientTool(tl) {
					t.Fatalf("a provider's tool passed: %v", tl)
				}
			}
		}
	})
}
