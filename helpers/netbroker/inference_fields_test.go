package netbroker

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Issue #22's searches the denylist let through, and the models that
// search on their own, are refused with a reason naming what; the same
// request without it passes (the positive control).
func TestInferenceRefusesSearch(t *testing.T) {
	for _, tc := range []struct{ path, extra, why string }{
		{"/v1/chat/completions", `"web_search_options":{}`, "web_search_options"},
		{"/v1/chat/completions", `"search_parameters":{"mode":"on"}`, "search_parameters"},
		{"/v1/chat/completions", `"plugins":[{"id":"web"}]`, "plugins"},
		{"/v1/chat/completions", `"search_domain_filter":["example.com"]`, "search_domain_filter"},
		{"/v1/responses", `"prompt":{"id":"pmpt_1"}`, `"prompt"`},
		{"/v1/messages", `"plugins":[{"id":"web"}]`, "plugins"},
	} {
		body := `{"model":"m","messages":[{"role":"user","content":"hi"}],` + tc.extra + `}`
		_, err := FilterInference("POST", tc.path, []byte(body))
		ref, ok := err.(*Refusal)
		if !ok || ref.Status != 403 || !strings.Contains(ref.Reason, tc.why) || !strings.Contains(ref.Reason, "search or fetch") {
			t.Errorf("%s %s: %v", tc.path, tc.extra, err)
		}
		if _, err := FilterInference("POST", tc.path, []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)); err != nil {
			t.Errorf("%s without %s: %v", tc.path, tc.extra, err)
		}
	}
	for _, model := range []string{"gpt-4o-search-preview", "gpt-4o-mini-search-preview-2025-03-11", "gpt-5-search-api", "o3-deep-research",
		"sonar", "sonar-pro", "perplexity/sonar-reasoning-pro", "openai/gpt-4o:online", "groq/compound", "compound-beta-mini", "SONAR"} {
		_, err := FilterInference("POST", "/v1/chat/completions", []byte(`{"model":"`+model+`","messages":[]}`))
		if ref, ok := err.(*Refusal); !ok || ref.Status != 403 || !strings.Contains(ref.Reason, "searches the web on its own") {
			t.Errorf("model %s: %v", model, err)
		}
	}
	for _, model := range []string{"gpt-4o", "claude-sonnet-4-5", "openai/gpt-4o", "grok-4", "llama3.1:8b", "research-assistant"} {
		if _, err := FilterInference("POST", "/v1/chat/completions", []byte(`{"model":"`+model+`","messages":[]}`)); err != nil {
			t.Errorf("model %s: %v", model, err)
		}
	}
	if _, err := FilterInference("POST", "/v1/chat/completions", []byte(`{"model":7,"messages":[]}`)); err == nil {
		t.Error("a model that is not a string passed")
	}
	if _, err := FilterInference("GET", "/v1/models", []byte(`{"x":1}`)); err == nil {
		t.Error("the models list passed a body")
	}
}

// A field not in the call's list is dropped, every field in it is kept
// as written, and the drop is counted; a tool of a type the agent
// doesn't run itself is removed, one it does is kept.
func TestInferenceAllowList(t *testing.T) {
	body := `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"seed":12345678901234567891,
		"stream":true,"stream_options":{"include_usage":true},"response_format":{"type":"json_object"},
		"provider":{"order":["x"]},"transforms":["middle-out"],"x_unknown":1,
		"tools":[{"type":"function","function":{"name":"f"}},{"type":"web_search"},{"type":"x_search"},{"type":"live_search"},{"type":"custom","name":"c"},{"type":7}]}`
	f, err := filterInference("POST", "/v1/chat/completions", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(f.body, &got); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"messages", "model", "response_format", "seed", "stream", "stream_options", "temperature", "tools"}; !slices.Equal(keys, want) {
		t.Errorf("kept %v, want %v", keys, want)
	}
	if f.dropped != 3 || f.removed != 4 || string(got["seed"]) != "12345678901234567891" {
		t.Errorf("%d dropped, %d removed, seed %s", f.dropped, f.removed, got["seed"])
	}
	var tools []map[string]any
	json.Unmarshal(got["tools"], &tools)
	if len(tools) != 2 || tools[0]["type"] != "function" || tools[1]["type"] != "custom" {
		t.Errorf("tools kept: %v", tools)
	}
	// Anthropic's client tools (no type, or bash_/text_editor_/memory_)
	// stay; its server tools go, and so does a type this list doesn't know.
	f, err = filterInference("POST", "/v1/messages", []byte(`{"model":"claude","max_tokens":1,"messages":[],"container":"c1","context_management":{},
		"tools":[{"name":"local","input_schema":{}},{"type":"bash_20250124","name":"bash"},{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"},
		{"type":"web_fetch_20250910","name":"web_fetch"},{"type":"tool_search_tool_regex_20251119","name":"s"},{"type":"computer_20250124","name":"computer"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if f.removed != 3 || f.dropped != 1 || strings.Contains(string(f.body), "container") || !strings.Contains(string(f.body), "context_management") {
		t.Errorf("messages: %d removed, %d dropped: %s", f.removed, f.dropped, f.body)
	}
	// Every call's list is free of the fields that search.
	for call, api := range inferenceAPIs {
		for _, k := range api.Fields {
			if _, ok := searchFields[k]; ok {
				t.Errorf("%s passes %s, which searches", call, k)
			}
			if _, ok := responsesSearchFields[k]; ok && call == "POST /v1/responses" {
				t.Errorf("%s passes %s, which searches", call, k)
			}
		}
	}
}
