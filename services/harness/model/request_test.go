package model

import (
	"context"
	"encoding/json"
	"testing"

	"lnk.dev/lnk/helpers/netbroker"
)

// TestRequestBodies: the conversation in each format, as its reference
// says: the system prompt, the call with its arguments (OpenAI: JSON
// text; Anthropic: the object), the tool's answer naming its call, the
// tools with their schemas, max_tokens, and a stream asked for with its
// usage; no field the sandbox's proxy would drop.
func TestRequestBodies(t *testing.T) {
	t.Run("openai", func(t *testing.T) {
		p := newProvider(t, loadRecorded(t, "openai/stream_text.http"))
		if _, err := mustNew(t, endpointFor(p, FormatOpenAI)).Complete(context.Background(), aRequest(), nil); err != nil {
			t.Fatal(err)
		}
		want := `{"model":"test-model","messages":[` +
			`{"role":"system","content":"You are Link's agent."},` +
			`{"role":"user","content":"list the work folder"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"run__command","arguments":"{\"argv\":[\"ls\",\"work\"]}"}}]},` +
			`{"role":"tool","content":"a.txt\nb.md","tool_call_id":"call_1"},` +
			`{"role":"user","content":"and read todo.md"}],` +
			`"tools":[{"type":"function","function":{"name":"run__command","description":"Runs a command.","parameters":{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"}}}}}}],` +
			`"max_tokens":4096,"stream":true,"stream_options":{"include_usage":true}}`
		sameJSON(t, p.requests()[0].Body, want)
	})
	t.Run("anthropic", func(t *testing.T) {
		p := newProvider(t, loadRecorded(t, "anthropic/stream_text.http"))
		req := aRequest()
		req.MaxTokens = 1000
		if _, err := mustNew(t, endpointFor(p, FormatAnthropic)).Complete(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		want := `{"model":"test-model","system":"You are Link's agent.","messages":[` +
			`{"role":"user","content":[{"type":"text","text":"list the work folder"}]},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"run__command","input":{"argv":["ls","work"]}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"a.txt\nb.md"},{"type":"text","text":"and read todo.md"}]}],` +
			`"tools":[{"name":"run__command","description":"Runs a command.","input_schema":{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"}}}}}],` +
			`"max_tokens":1000,"stream":true}`
		sameJSON(t, p.requests()[0].Body, want)
	})
	t.Run("reasoning model", func(t *testing.T) {
		// OpenAI's reasoning models refuse max_tokens.
		for model, field := range map[string]string{"gpt-5-mini": "max_completion_tokens", "o3": "max_completion_tokens",
			"openai/o4-mini": "max_completion_tokens", "gpt-4o": "max_tokens", "llama3.1:8b": "max_tokens", "o1x": "max_tokens"} {
			b, err := openAIBody(aRequest(), model, true)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			json.Unmarshal(b, &m)
			if m[field] != float64(DefaultMaxTokens) || len(m) != 6 {
				t.Errorf("%s: %s = %v in %v", model, field, m[field], m)
			}
		}
	})
	t.Run("whole", func(t *testing.T) {
		p := newProvider(t, loadRecorded(t, "openai/whole_text.http"))
		e := endpointFor(p, FormatOpenAI)
		e.NoStream = true
		if _, err := mustNew(t, e).Complete(context.Background(), aRequest(), nil); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		json.Unmarshal(p.requests()[0].Body, &m)
		if m["stream"] != false || m["stream_options"] != nil {
			t.Errorf("a whole answer's request asked stream %v, %v", m["stream"], m["stream_options"])
		}
	})
}

func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("sent\n%s\nwant\n%s", gb, wb)
	}
}

// TestRequestPassesTheProxy: the request each format sends passes the
// sandbox's proxy's inference filter (helpers/netbroker's, the real
// one) unchanged: no field it drops, no tool it removes, nothing it
// refuses.
func TestRequestPassesTheProxy(t *testing.T) {
	for _, c := range []struct {
		format, path string
		body         func(Request, string, bool) ([]byte, error)
	}{
		{FormatOpenAI, "/v1/chat/completions", openAIBody},
		{FormatAnthropic, "/v1/messages", anthropicBody},
	} {
		for _, stream := range []bool{true, false} {
			b, err := c.body(aRequest(), "m", stream)
			if err != nil {
				t.Fatal(err)
			}
			out, err := netbroker.FilterInference("POST", c.path, b)
			if err != nil {
				t.Fatalf("%s: the proxy refuses the request: %v", c.format, err)
			}
			sameJSON(t, out, string(b))
		}
	}
}
