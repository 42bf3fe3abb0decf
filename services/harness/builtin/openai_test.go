package builtin

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The shapes below are OpenAI's chat-completions objects as its API
// reference documents them (and go-openai decodes them): every chunk
// and answer is decoded into them with unknown fields refused, and the
// members OpenAI always sends are checked present, null or not.

type oaUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
		AudioTokens  int `json:"audio_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens          int `json:"reasoning_tokens"`
		AudioTokens              int `json:"audio_tokens"`
		AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
		RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
	} `json:"completion_tokens_details"`
}

type oaFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type oaToolCall struct {
	Index    *int       `json:"index,omitempty"`
	ID       string     `json:"id,omitempty"`
	Type     string     `json:"type,omitempty"`
	Function oaFunction `json:"function"`
}

type oaDelta struct {
	Role      string       `json:"role,omitempty"`
	Content   *string      `json:"content"`
	Refusal   *string      `json:"refusal"`
	ToolCalls []oaToolCall `json:"tool_calls,omitempty"`
}

type oaChunk struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Created           int64  `json:"created"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		Index        int             `json:"index"`
		Delta        oaDelta         `json:"delta"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason *string         `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage `json:"usage"`
}

type oaCompletion struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Created           int64  `json:"created"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		Index   int `json:"index"`
		Message struct {
			Role        string       `json:"role"`
			Content     *string      `json:"content"`
			Refusal     *string      `json:"refusal"`
			ToolCalls   []oaToolCall `json:"tool_calls,omitempty"`
			Annotations []any        `json:"annotations"`
		} `json:"message"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason string          `json:"finish_reason"`
	} `json:"choices"`
	Usage oaUsage `json:"usage"`
}

type oaError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// strict decodes b into v refusing unknown fields, and checks that each
// of must is a member of b's top-level object.
func strict(t *testing.T, b []byte, v any, must ...string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("not OpenAI's shape: %v\n%s", err, b)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range must {
		if _, ok := m[k]; !ok {
			t.Fatalf("no %q in %s", k, b)
		}
	}
}

// turn is one answer as a client sees it.
type turn struct {
	status  int
	header  http.Header
	raw     []byte
	chunks  []oaChunk
	text    string
	calls   []oaToolCall
	finish  string
	usage   *oaUsage
	id      string
	whole   *oaCompletion
	errBody *oaError
}

// post sends body to the handler through a real loopback server, and
// decodes the answer strictly: a whole completion, a stream of chunks
// (each checked, the calls put together by index), or an error body.
func post(t *testing.T, url string, body string) turn {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	tr := turn{status: resp.StatusCode, header: resp.Header, raw: raw}
	switch {
	case resp.StatusCode != http.StatusOK:
		var e oaError
		strict(t, raw, &e, "error")
		if e.Error.Message == "" || e.Error.Type == "" {
			t.Fatalf("an error body without message or type: %s", raw)
		}
		tr.errBody = &e
	case strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"):
		tr.readStream(t)
	default:
		var c oaCompletion
		strict(t, raw, &c, "id", "object", "created", "model", "choices", "usage", "system_fingerprint")
		if c.Object != "chat.completion" || len(c.Choices) != 1 {
			t.Fatalf("not one chat.completion: %s", raw)
		}
		tr.whole, tr.id, tr.finish, tr.usage = &c, c.ID, c.Choices[0].FinishReason, &c.Usage
		if c.Choices[0].Message.Content != nil {
			tr.text = *c.Choices[0].Message.Content
		}
		tr.calls = c.Choices[0].Message.ToolCalls
	}
	return tr
}

func (tr *turn) readStream(t *testing.T) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(tr.raw))
	sc.Buffer(nil, 1<<20)
	done := false
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		if done {
			t.Fatalf("an event after [DONE]: %q", line)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("a line that isn't an SSE data line: %q", line)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		var c oaChunk
		strict(t, []byte(data), &c, "id", "object", "created", "model", "choices", "system_fingerprint")
		if c.Object != "chat.completion.chunk" {
			t.Fatalf("object %q", c.Object)
		}
		if tr.id == "" {
			tr.id = c.ID
		} else if c.ID != tr.id {
			t.Fatalf("chunk id %q after %q", c.ID, tr.id)
		}
		if tr.finish != "" && len(c.Choices) > 0 {
			t.Fatalf("a choice after the finish: %s", data)
		}
		if c.Usage != nil {
			tr.usage = c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 || string(ch.Logprobs) != "null" {
				t.Fatalf("choice index %d logprobs %s", ch.Index, ch.Logprobs)
			}
			if ch.Delta.Content != nil {
				tr.text += *ch.Delta.Content
			}
			for _, d := range ch.Delta.ToolCalls {
				if d.Index == nil {
					t.Fatalf("a tool call delta without index: %s", data)
				}
				i := *d.Index
				switch {
				case i == len(tr.calls):
					if d.ID == "" || d.Type != "function" || d.Function.Name == "" {
						t.Fatalf("a call's first delta without id, type or name: %s", data)
					}
					tr.calls = append(tr.calls, d)
				case i < len(tr.calls):
					if d.ID != "" || d.Function.Name != "" {
						t.Fatalf("a later delta repeats the id or name: %s", data)
					}
					tr.calls[i].Function.Arguments += d.Function.Arguments
				default:
					t.Fatalf("call index %d skips one", i)
				}
			}
			if ch.FinishReason != nil {
				tr.finish = *ch.FinishReason
			}
		}
		tr.chunks = append(tr.chunks, c)
	}
	if !done {
		t.Fatalf("the stream never said [DONE]:\n%s", tr.raw)
	}
}

func serve(t testing.TB, o Options) string {
	s := httptest.NewServer(Handler(o))
	t.Cleanup(s.Close)
	return s.URL
}

// request builds a chat-completions body.
func request(stream bool, tools []string, msgs ...map[string]any) string {
	r := map[string]any{"model": "link-builtin", "messages": msgs}
	if stream {
		r["stream"] = true
		r["stream_options"] = map[string]any{"include_usage": true}
	}
	var ts []any
	for _, name := range tools {
		ts = append(ts, map[string]any{"type": "function", "function": map[string]any{
			"name": name, "description": "a tool", "parameters": json.RawMessage(schemas[name])}})
	}
	if ts != nil {
		r["tools"] = ts
	}
	b, _ := json.Marshal(r)
	return string(b)
}

func user(text string) map[string]any   { return map[string]any{"role": "user", "content": text} }
func system(text string) map[string]any { return map[string]any{"role": "system", "content": text} }
func toolAnswer(id, text string) map[string]any {
	return map[string]any{"role": "tool", "tool_call_id": id, "content": text}
}
func assistantCall(id, name, args string) map[string]any {
	return map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
		map[string]any{"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}
}

// schemas are the offered calls' schemas as Link's tools offer them
// (services/runtool/server, services/filetool/offer.go).
var schemas = map[string]string{
	"run__command":              `{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"},"minItems":1},"folder":{"type":"string"}},"required":["argv"],"additionalProperties":false}`,
	"run__start":                `{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"},"minItems":1},"folder":{"type":"string"}},"required":["argv"],"additionalProperties":false}`,
	"file__read":                `{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer"},"limit":{"type":"integer"}},"required":["path"],"additionalProperties":false}`,
	"file__write":               `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`,
	"file__list":                `{"type":"object","properties":{"path":{"type":"string"}},"additionalProperties":false}`,
	"memory__remember":          `{"type":"object","properties":{"note":{"type":"string"}},"required":["note"],"additionalProperties":false}`,
	"memory__search":            `{"type":"object","properties":{"words":{"type":"string"}},"required":["words"],"additionalProperties":false}`,
	"scheduler__add":            `{"type":"object","properties":{"text":{"type":"string"},"in_minutes":{"type":"integer","minimum":1}},"required":["text"],"additionalProperties":false}`,
	"scheduler__start_subagent": `{"type":"object","properties":{"task":{"type":"string"},"tools":{"type":"array","items":{"type":"string"}},"model":{"type":"string"}},"required":["task"],"additionalProperties":false}`,
	"web__fetch":                `{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`,
	"odd__argv_int":             `{"type":"object","properties":{"argv":{"type":"integer"}}}`,
}

var allTools = []string{"run__command", "run__start", "file__read", "file__write", "file__list", "memory__remember", "memory__search", "scheduler__add", "scheduler__start_subagent"}
