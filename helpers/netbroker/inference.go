package netbroker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"lnk.dev/lnk/internal/refusal"
)

// MaxInferenceBody is the largest inference request the filter reads.
const MaxInferenceBody = MaxRouteBody

// FilterInference checks an inference request: its method and path must
// be an inference call ([inferenceAPIs]); its JSON body may not ask the
// provider to search or fetch (a field known to, a model that searches
// on its own, an image or a document by URL); the provider's own
// server-side tools and MCP servers are removed from it, and every
// top-level field not in the call's list is dropped. It returns the body
// to send.
func FilterInference(method, path string, body []byte) ([]byte, error) {
	f, err := filterInference(method, path, body)
	return f.body, err
}

// filtered is a request that passed, with what was taken out of it
// (counts alone: the log names no more).
type filtered struct {
	body []byte
	// removed counts the provider's own tools and MCP servers removed.
	removed int
	// dropped counts the top-level fields not in the call's list.
	dropped int
}

// filterInference is FilterInference, also counting what it took out.
func filterInference(method, path string, body []byte) (filtered, error) {
	path, _, _ = strings.Cut(path, "?")
	api, ok := inferenceAPIs[method+" "+path]
	if !ok {
		return filtered{}, &Refusal{Status: 403, Refusal: refusal.Refusal{Rule: KindRoute, Reason: "not an inference call: a model's key and a local model serve inference only (messages, chat completions, completions, responses, embeddings, audio transcriptions, the models list), never files, batches, the account or a model's admin API"}}
	}
	switch {
	case api.NoBody:
		if len(bytes.TrimSpace(body)) != 0 {
			return filtered{}, malformed("the models list takes no body")
		}
		return filtered{body: body}, nil
	case api.Multipart, len(body) == 0:
		return filtered{body: body}, nil
	}
	// Numbers stay as they were written (a seed over 2^53 is not rounded).
	var req map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil || req == nil || dec.InputOffset() != int64(len(bytes.TrimRight(body, " \t\r\n"))) {
		return filtered{}, malformed("an inference request's body is not a JSON object")
	}
	if ref := searchRefusal(path, req); ref != nil {
		return filtered{}, ref
	}
	var f filtered
	// The provider's own tools and MCP servers go first: an MCP server
	// is named by a {"type":"url"} entry, removed, not refused.
	for _, k := range api.Removed {
		if m, ok := req[k]; ok {
			f.removed++
			if l, ok := m.([]any); ok {
				f.removed += len(l) - 1
			}
			delete(req, k)
		}
	}
	if tools, ok := req["tools"].([]any); ok {
		kept := tools[:0:0]
		for _, t := range tools {
			if isClientTool(t) {
				kept = append(kept, t)
			}
		}
		f.removed += len(tools) - len(kept)
		req["tools"] = kept
	}
	for k := range req {
		if !slices.Contains(api.Fields, k) {
			delete(req, k)
			f.dropped++
		}
	}
	if ref := findURLFetch(req, 0); ref != nil {
		return filtered{}, ref
	}
	out, err := json.Marshal(req)
	f.body = out
	return f, err
}

// searchRefusal refuses a request holding a field known to make the
// provider search or fetch, or naming a model that searches on its own.
func searchRefusal(path string, req map[string]any) *Refusal {
	for k := range req {
		why, ok := searchFields[k]
		if !ok && path == "/v1/responses" {
			why, ok = responsesSearchFields[k]
		}
		if ok {
			return &Refusal{Status: 403, Refusal: refusal.Refusal{Rule: KindRoute, Reason: fmt.Sprintf("a request asking the provider to search or fetch is refused: %q is %s, which would reach the internet for the agent", k, why)}}
		}
	}
	m, ok := req["model"]
	if !ok {
		return nil
	}
	model, ok := m.(string)
	if !ok {
		return malformed("an inference request's model is not a string")
	}
	if why := searchingModel(model); why != "" {
		return &Refusal{Status: 403, Refusal: refusal.Refusal{Rule: KindRoute, Reason: fmt.Sprintf("a model that searches the web on its own is refused (%s): it would reach the internet for the agent; name another model", why)}}
	}
	return nil
}

// searchingModel says why model searches on its own, or "" if it is
// not known to.
func searchingModel(model string) string {
	l := strings.ToLower(strings.TrimSpace(model))
	name := l[strings.LastIndexByte(l, '/')+1:]
	for _, s := range searchModels {
		switch {
		case s.Contains != "" && strings.Contains(l, s.Contains),
			s.Prefix != "" && (strings.HasPrefix(l, s.Prefix) || strings.HasPrefix(name, s.Prefix)),
			s.Suffix != "" && strings.HasSuffix(l, s.Suffix):
			return s.Why
		}
	}
	return ""
}

// isClientTool reports a tool the agent runs itself: one of
// clientToolTypes. Anything else, including what isn't an object, is
// the provider's own or unknown, and removed.
func isClientTool(t any) bool {
	m, ok := t.(map[string]any)
	if !ok {
		return false
	}
	typ, ok := m["type"].(string)
	if _, present := m["type"]; present && !ok {
		return false
	}
	if slices.Contains(clientToolTypes.Exact, typ) {
		return true
	}
	for _, p := range clientToolTypes.Prefix {
		if strings.HasPrefix(typ, p) {
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
	return &Refusal{Status: 403, Refusal: refusal.Refusal{Rule: KindRoute, Reason: "a request asking the provider to fetch a URL is refused: it would reach the internet for the agent; send the bytes instead"}}
}
