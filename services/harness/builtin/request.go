package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/toolname"
)

// Request is a chat-completions request as the built-in reads it.
type Request struct {
	Model         string         `json:"model"`
	Messages      []Message      `json:"messages"`
	Tools         []Tool         `json:"tools,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	MaxTokens     *int           `json:"max_tokens,omitempty"`
	MaxCompletion *int           `json:"max_completion_tokens,omitempty"`
	N             *int           `json:"n,omitempty"`

	// Accepted as OpenAI documents them, and ignored: the built-in's
	// answer depends on none of them.
	ToolChoice        json.RawMessage `json:"tool_choice,omitempty"`
	ParallelToolCalls json.RawMessage `json:"parallel_tool_calls,omitempty"`
	Temperature       json.RawMessage `json:"temperature,omitempty"`
	TopP              json.RawMessage `json:"top_p,omitempty"`
	Stop              json.RawMessage `json:"stop,omitempty"`
	Seed              json.RawMessage `json:"seed,omitempty"`
	User              json.RawMessage `json:"user,omitempty"`
	PresencePenalty   json.RawMessage `json:"presence_penalty,omitempty"`
	FrequencyPenalty  json.RawMessage `json:"frequency_penalty,omitempty"`
	LogitBias         json.RawMessage `json:"logit_bias,omitempty"`
	Logprobs          json.RawMessage `json:"logprobs,omitempty"`
	TopLogprobs       json.RawMessage `json:"top_logprobs,omitempty"`
	ResponseFormat    json.RawMessage `json:"response_format,omitempty"`
	Metadata          json.RawMessage `json:"metadata,omitempty"`
	Store             json.RawMessage `json:"store,omitempty"`
	ReasoningEffort   json.RawMessage `json:"reasoning_effort,omitempty"`
	ServiceTier       json.RawMessage `json:"service_tier,omitempty"`
	Modalities        json.RawMessage `json:"modalities,omitempty"`
	Functions         json.RawMessage `json:"functions,omitempty"`
	FunctionCall      json.RawMessage `json:"function_call,omitempty"`
	Audio             json.RawMessage `json:"audio,omitempty"`
	Prediction        json.RawMessage `json:"prediction,omitempty"`
	WebSearchOptions  json.RawMessage `json:"web_search_options,omitempty"`
	Verbosity         json.RawMessage `json:"verbosity,omitempty"`
	PromptCacheKey    json.RawMessage `json:"prompt_cache_key,omitempty"`
	SafetyIdentifier  json.RawMessage `json:"safety_identifier,omitempty"`
}

// StreamOptions is the request's stream_options.
type StreamOptions struct {
	IncludeUsage       bool            `json:"include_usage,omitempty"`
	IncludeObfuscation json.RawMessage `json:"include_obfuscation,omitempty"` // taken, and ignored
}

// Message is one message of the request.
type Message struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content,omitempty"` // a string, an array of parts, or null
	Name         string          `json:"name,omitempty"`
	ToolCalls    []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID   string          `json:"tool_call_id,omitempty"`
	Refusal      json.RawMessage `json:"refusal,omitempty"`
	Audio        json.RawMessage `json:"audio,omitempty"`         // taken, and ignored
	FunctionCall json.RawMessage `json:"function_call,omitempty"` // taken, and ignored

	text string // Content's text, set by ParseRequest
}

// Text is the message's content as text: a string, or its text parts
// joined by newlines (an image part reads "[image]").
func (m *Message) Text() string { return m.text }

// ToolCall is one call of an assistant message, or of the answer.
type ToolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is a call's name and arguments (a JSON object, as text).
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is one tool the request offers.
type Tool struct {
	Type     string       `json:"type"`
	Function FunctionSpec `json:"function"`
}

// FunctionSpec is an offered function: its name and argument schema.
type FunctionSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      json.RawMessage `json:"strict,omitempty"`
}

type contentPart struct {
	Type       string          `json:"type"`
	Text       string          `json:"text,omitempty"`
	ImageURL   json.RawMessage `json:"image_url,omitempty"`
	InputAudio json.RawMessage `json:"input_audio,omitempty"`
	File       json.RawMessage `json:"file,omitempty"`
	Refusal    string          `json:"refusal,omitempty"`
}

// RequestError is a request the built-in refuses (400), with the field
// it names, as OpenAI's error body carries it.
type RequestError struct {
	Param   string
	Message string
}

func (e *RequestError) Error() string { return e.Message }

func badRequest(param, format string, args ...any) error {
	return &RequestError{Param: param, Message: fmt.Sprintf(format, args...)}
}

// offeredName is a function's name as a provider takes it and Link
// Harness offers it: internal/toolname's rule (1 to MaxOffered letters,
// digits, '_' or '-'), the one rule every layer keeps.
func offeredName(n string) bool {
	return n != "" && len(n) <= toolname.MaxOffered && toolname.ProviderChars(n)
}

// ParseRequest decodes body strictly: one JSON object, no member twice
// or in another case, no field OpenAI doesn't document, messages with
// known roles, tools that are functions with valid names and object
// schemas. Every refusal is a *RequestError.
func ParseRequest(body []byte) (*Request, error) {
	if !json.Valid(body) {
		return nil, badRequest("", "the body is not valid JSON")
	}
	seen := map[string]bool{}
	var dup string
	err := jsonscan.Members(body, func(k string, _ jsonscan.Span) {
		if lk := strings.ToLower(k); seen[lk] && dup == "" {
			dup = k
		} else {
			seen[lk] = true
		}
	})
	if err != nil {
		return nil, badRequest("", "the body is not a JSON object")
	}
	if dup != "" {
		return nil, badRequest(dup, "%q is written twice", dup)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var r Request
	if err := dec.Decode(&r); err != nil {
		return nil, badRequest(fieldOf(err), "the request does not decode: %s", cleanDecodeError(err))
	}
	if err := r.check(); err != nil {
		return nil, err
	}
	return &r, nil
}

// toolChoice reads tool_choice: "none" offers no call; an object naming
// a function ({"type": "function", "function": {"name": …}}) offers that
// one alone; "auto", "required" or none at all, every tool offered.
func (r *Request) toolChoice() (only string, none bool) {
	var s string
	if json.Unmarshal(r.ToolChoice, &s) == nil {
		return "", s == "none"
	}
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	json.Unmarshal(r.ToolChoice, &named)
	return named.Function.Name, false
}

func (r *Request) check() error {
	if len(r.Messages) == 0 {
		return badRequest("messages", "messages is empty: a request needs at least one")
	}
	for _, v := range []struct {
		name string
		n    *int
	}{{"max_tokens", r.MaxTokens}, {"max_completion_tokens", r.MaxCompletion}} {
		if v.n != nil && *v.n < 1 {
			return badRequest(v.name, "%s must be at least 1", v.name)
		}
	}
	if len(r.ToolChoice) > 0 && !isNull(r.ToolChoice) {
		var s string
		var named struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		switch {
		case json.Unmarshal(r.ToolChoice, &s) == nil:
			if s != "none" && s != "auto" && s != "required" {
				return badRequest("tool_choice", "tool_choice %q is not none, auto or required", s)
			}
		case json.Unmarshal(r.ToolChoice, &named) == nil && named.Type == "function" && named.Function.Name != "":
		default:
			return badRequest("tool_choice", "tool_choice is neither none, auto, required nor a function named")
		}
	}
	if r.N != nil && *r.N != 1 {
		return badRequest("n", "n must be 1: the built-in gives one choice")
	}
	names := map[string]bool{}
	for i := range r.Tools {
		t := &r.Tools[i]
		p := fmt.Sprintf("tools[%d]", i)
		if t.Type != "function" {
			return badRequest(p+".type", "%s.type must be \"function\"", p)
		}
		if !offeredName(t.Function.Name) {
			return badRequest(p+".function.name", "%s.function.name must be 1 to %d letters, digits, '_' or '-'", p, toolname.MaxOffered)
		}
		if names[t.Function.Name] {
			return badRequest(p+".function.name", "%s.function.name %q is offered twice", p, t.Function.Name)
		}
		names[t.Function.Name] = true
		if len(t.Function.Parameters) > 0 && !isNull(t.Function.Parameters) {
			var s map[string]json.RawMessage
			if json.Unmarshal(t.Function.Parameters, &s) != nil {
				return badRequest(p+".function.parameters", "%s.function.parameters must be a JSON Schema object", p)
			}
		}
	}
	for i := range r.Messages {
		if err := r.Messages[i].check(i); err != nil {
			return err
		}
	}
	return nil
}

func (m *Message) check(i int) error {
	p := fmt.Sprintf("messages[%d]", i)
	switch m.Role {
	case "system", "developer", "user", "assistant", "tool":
	default:
		return badRequest(p+".role", "%s.role %q is not system, developer, user, assistant or tool", p, m.Role)
	}
	text, err := contentText(m.Content)
	if err != nil {
		return badRequest(p+".content", "%s.content %s", p, err)
	}
	m.text = text
	if m.Role == "tool" && m.ToolCallID == "" {
		return badRequest(p+".tool_call_id", "%s is a tool message without tool_call_id", p)
	}
	if len(m.ToolCalls) > 0 && m.Role != "assistant" {
		return badRequest(p+".tool_calls", "%s has tool_calls but is not the assistant's", p)
	}
	for j, c := range m.ToolCalls {
		if c.ID == "" || c.Function.Name == "" {
			return badRequest(fmt.Sprintf("%s.tool_calls[%d]", p, j), "%s.tool_calls[%d] needs an id and a function name", p, j)
		}
	}
	return nil
}

// contentText reads a message's content: a string, null, or an array of
// parts.
func contentText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || isNull(raw) {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var parts []contentPart
	if err := dec.Decode(&parts); err != nil {
		return "", errors.New("is neither a string nor an array of content parts")
	}
	var b strings.Builder
	for _, part := range parts {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		switch part.Type {
		case "text":
			b.WriteString(part.Text)
		case "refusal":
			b.WriteString(part.Refusal)
		case "image_url", "input_audio", "file":
			b.WriteString("[" + part.Type + "]")
		default:
			return "", fmt.Errorf("has a part of unknown type %q", part.Type)
		}
	}
	return b.String(), nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// fieldOf names the field a decode error is about, where it says.
func fieldOf(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return strings.Trim(f, `"`)
	}
	return ""
}

func cleanDecodeError(err error) string {
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "unrecognized request argument " + f
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
