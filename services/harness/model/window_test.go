package model

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWindowTokens: 32,768 for a model Link doesn't know; the table's
// window for one it does, whatever a router's prefix, a runtime's tag or
// the case; the longest start wins (gpt-4o is not gpt-4).
func TestWindowTokens(t *testing.T) {
	for _, c := range []struct {
		model string
		want  int
	}{
		{"", 32768},
		{"my-finetune", 32768},
		{"link-builtin", 32768},
		{"claude-sonnet-4-5-20250929", 200000},
		{"anthropic/claude-opus-4-1", 200000},
		{"gpt-4o-mini", 128000},
		{"gpt-4", 8192},
		{"GPT-4.1-mini", 1047576},
		{"llama3.1:8b", 131072},
		{"llama3:8b", 8192},
		{"qwen2.5:7b-instruct", 32768},
		{"meta-llama/llama-3.3-70b-instruct", 131072},
	} {
		if got := WindowTokens(c.model); got != c.want {
			t.Errorf("WindowTokens(%q) = %d, want %d", c.model, got, c.want)
		}
	}
	if UnknownWindow != 32768 {
		t.Errorf("UnknownWindow = %d; the spec's is 32,768", UnknownWindow)
	}
}

// TestEstimateTokens counts every part of a request (system, messages,
// calls, tools), a token per 3 bytes of ASCII and one per other
// character, and grows with each.
func TestEstimateTokens(t *testing.T) {
	if got := EstimateTokens(Request{System: strings.Repeat("a", 400)}); got != 134 {
		t.Errorf("400 ASCII bytes: %d, want 134", got)
	}
	if got := EstimateTokens(Request{System: strings.Repeat("語", 100)}); got != 100 {
		t.Errorf("100 CJK characters: %d, want 100", got)
	}
	base := EstimateTokens(Request{})
	if base != 0 {
		t.Errorf("an empty request: %d", base)
	}
	req := aRequest()
	full := EstimateTokens(req)
	for name, cut := range map[string]func(*Request){
		"system":   func(r *Request) { r.System = "" },
		"tools":    func(r *Request) { r.Tools = nil },
		"calls":    func(r *Request) { r.Messages[1].ToolCalls[0].Arguments = json.RawMessage(`{}`) },
		"messages": func(r *Request) { r.Messages = r.Messages[:1] },
	} {
		r := aRequest()
		cut(&r)
		if got := EstimateTokens(r); got >= full {
			t.Errorf("without its %s a request counts %d, not less than %d", name, got, full)
		}
	}
}
