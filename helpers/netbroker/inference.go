package netbroker

import (
	"bytes"
	"encoding/json"
	"strings"
)

// inferencePaths are the model APIs' inference calls, by method: the
// only calls a model's key, or a local model, is used for. Files,
// batches, the account and a local runtime's admin API (pull, push,
// delete, create, copy) are refused.
var inferencePaths = map[string][]string{
	"POST": {
		"/v1/messages", "/v1/messages/count_tokens", "/v1/chat/completions", "/v1/completions",
		"/v1/embeddings", "/v1/audio/transcriptions", "/v1/responses",
		"/api/generate", "/api/chat", "/api/embed", "/api/embeddings", "/api/show",
	},
	"GET": {"/v1/models", "/api/tags", "/api/version"},
}

// serverTools are the tool types a provider runs on its own servers,
// which would reach the internet for the agent: removed from a request.
var serverTools = []string{"web_search", "web_fetch", "code_execution", "mcp", "computer", "file_search", "image_generation", "code_interpreter"}

// MaxInferenceBody is the largest inference request the filter reads.
const MaxInferenceBody = MaxRouteBody

// FilterInference checks an inference request: its method and path must
// be an inference call, its JSON body may not ask the provider to fetch a
// URL (an image or a document by URL), and the provider's own server-side
// tools and MCP servers are removed from it. It returns the body to send.
func FilterInference(method, path string, body []byte) ([]byte, error) {
	out, _, err := filterInference(method, path, body)
	return out, err
}

// filterInference is FilterInference, also counting the provider tools
// and MCP servers it removed (for the log, which names no more).
func filterInference(method, path string, body []byte) ([]byte, int, error) {
	path, _, _ = strings.Cut(path, "?")
	ok := false
	for _, p := range inferencePaths[method] {
		if path == p {
			ok = true
		}
	}
	if !ok {
		return nil, 0, &Refusal{Status: 403, Kind: KindRoute,
			Reason: "not an inference call: a model's key and a local model serve inference only (messages, chat completions, completions, embeddings, audio transcriptions, the models list), never files, batches, the account or a model's admin API"}
	}
	if method != "POST" || len(body) == 0 || strings.HasPrefix(path, "/v1/audio/") {
		return body, 0, nil
	}
	// Numbers stay as they were written (a seed over 2^53 is not rounded).
	var req map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil || req == nil || dec.InputOffset() != int64(len(bytes.TrimRight(body, " \t\r\n"))) {
		return nil, 0, malformed("an inference request's body is not a JSON object")
	}
	// The provider's own tools and MCP servers go first: an MCP server
	// is named by a {"type":"url"} entry, removed, not refused.
	removed := 0
	if m, ok := req["mcp_servers"]; ok {
		removed++
		if l, ok := m.([]any); ok {
			removed += len(l) - 1
		}
		delete(req, "mcp_servers")
	}
	if tools, ok := req["tools"].([]any); ok {
		kept := tools[:0:0]
		for _, t := range tools {
			if !isServerTool(t) {
				kept = append(kept, t)
			}
		}
		removed += len(tools) - len(kept)
		req["tools"] = kept
	}
	if ref := findURLFetch(req, 0); ref != nil {
		return nil, 0, ref
	}
	out, err := json.Marshal(req)
	return out, removed, err
}

func isServerTool(t any) bool {
	m, ok := t.(map[string]any)
	if !ok {
		return false
	}
	typ, _ := m["type"].(string)
	if typ == "" || typ == "function" || typ == "custom" {
		return false
	}
	for _, s := range serverTools {
		if strings.HasPrefix(typ, s) {
			return true
		}
	}
	return false
}

// findURLFetch looks through a request for content the provider would
// fetch by URL: {"type":"url","url":…} sources, image_url/file_url/
// document_url with an http(s) URL (data: URLs carry their bytes).
func findURLFetch(v any, depth int) *Refusal {
	if depth > 64 {
		return malformed("an inference request nested over 64 deep")
	}
	switch x := v.(type) {
	case map[string]any:
		if typ, _ := x["type"].(string); typ == "url" {
			return urlRefusal()
		}
		for k, e := range x {
			if k == "image_url" || k == "file_url" || k == "document_url" {
				u, _ := e.(string)
				if m, ok := e.(map[string]any); ok {
					u, _ = m["url"].(string)
				}
				if l := strings.ToLower(strings.TrimSpace(u)); strings.HasPrefix(l, "http:") || strings.HasPrefix(l, "https:") || strings.HasPrefix(l, "//") {
					return urlRefusal()
				}
			}
			if r := findURLFetch(e, depth+1); r != nil {
				return r
			}
		}
	case []any:
		for _, e := range x {
			if r := findURLFetch(e, depth+1); r != nil {
				return r
			}
		}
	}
	return nil
}

func urlRefusal() *Refusal {
	return &Refusal{Status: 403, Kind: KindRoute,
		Reason: "a request asking the provider to fetch a URL is refused: it would reach the internet for the agent; send the bytes instead"}
}
