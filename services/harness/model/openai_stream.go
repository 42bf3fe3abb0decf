package model

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// oaChunk is one chunk of a chat completions stream
// ("chat.completion.chunk"), or an OpenAI-compatible server's error
// sent in the stream.
type oaChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string      `json:"content"`
			Refusal   *string      `json:"refusal"`
			ToolCalls []oaCallPart `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage        `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// oaCallPart is one piece of a call: the first names its index, id and
// function name, the rest carry pieces of its arguments' text.
type oaCallPart struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// oaCall is a call being put together from its pieces.
type oaCall struct {
	call ToolCall
	args []byte
}

// openAIStream puts an answer together from its chunks. Event takes
// each event's data; Finish gives the answer, once the stream said it
// was whole ("[DONE]", or a finish reason before the stream's end).
type openAIStream struct {
	clean    cleaner
	onText   func(string)
	text     strings.Builder
	calls    []*oaCall
	byIndex  map[int]*oaCall
	finish   string
	usage    Usage
	done     bool
	finished bool
}

func newOpenAIStream(c cleaner, onText func(string)) *openAIStream {
	return &openAIStream{clean: c, onText: onText, byIndex: map[int]*oaCall{}}
}

// Event takes one event's data; done is true after "[DONE]".
func (s *openAIStream) Event(data []byte) (done bool, err error) {
	if s.done {
		return true, nil
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("[DONE]")) {
		s.done = true
		return true, nil
	}
	var ch oaChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return false, badResponse("a chunk of the stream is not JSON")
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		pe, ok := parseProviderError(append(append([]byte(`{"error":`), ch.Error...), '}'))
		if !ok {
			return false, badResponse("the stream sent an error of no known shape")
		}
		return false, streamError(pe, s.clean)
	}
	if ch.Usage != nil {
		s.usage = Usage{InputTokens: ch.Usage.PromptTokens, OutputTokens: ch.Usage.CompletionTokens}
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			return false, badResponse("the stream sent a second choice, which was not asked for")
		}
		if t := c.Delta.Content; t != nil && *t != "" {
			s.addText(*t)
		}
		if t := c.Delta.Refusal; t != nil && *t != "" {
			s.addText(*t)
			s.finish = "refusal"
		}
		for _, p := range c.Delta.ToolCalls {
			if err := s.addCall(p); err != nil {
				return false, err
			}
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			if s.finish != "refusal" {
				s.finish = *c.FinishReason
			}
			s.finished = true
		}
	}
	return false, nil
}

func (s *openAIStream) addText(t string) {
	s.text.WriteString(t)
	if s.onText != nil {
		s.onText(t)
	}
}

// addCall adds a piece of a call. A piece with an id other than its
// index's call starts a new call (a server that numbers every call 0).
func (s *openAIStream) addCall(p oaCallPart) error {
	idx := len(s.calls)
	if p.Index != nil {
		idx = *p.Index
	}
	if idx < 0 {
		return badResponse("a tool call's index is negative")
	}
	c := s.byIndex[idx]
	if c == nil || (p.ID != "" && c.call.ID != "" && p.ID != c.call.ID) {
		if len(s.calls) >= maxCalls {
			return badResponse("an answer with over %d tool calls", maxCalls)
		}
		c = &oaCall{}
		s.calls = append(s.calls, c)
		s.byIndex[idx] = c
	}
	if p.ID != "" && c.call.ID == "" {
		c.call.ID = p.ID
	}
	if n := p.Function.Name; n != "" && n != c.call.Name {
		c.call.Name += n
		if len(c.call.Name) > maxToolName {
			return badResponse("a tool call's name is over %d bytes", maxToolName)
		}
	}
	a, err := argumentsText(p.Function.Arguments)
	if err != nil {
		return err
	}
	c.args = append(c.args, a...)
	return nil
}

// argumentsText is a call's arguments as OpenAI sends them, JSON text
// in a string, or, as some compatible servers send them, the object
// itself.
func argumentsText(raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, badResponse("a tool call's arguments are not JSON text")
		}
		return []byte(s), nil
	}
	if raw[0] == '{' {
		return raw, nil
	}
	return nil, badResponse("a tool call's arguments are not a JSON object")
}

// Finish gives the whole answer; cut when the stream never said it was
// whole.
func (s *openAIStream) Finish() (Response, error) {
	if !s.done && !s.finished {
		return Response{}, &Error{Kind: KindCut, Message: "the stream ended before its last chunk"}
	}
	return openAIResponse(s.text.String(), s.calls, s.finish, s.usage)
}

// openAIResponse checks the calls and maps the finish reason.
func openAIResponse(text string, calls []*oaCall, finish string, usage Usage) (Response, error) {
	r := Response{Text: text, Usage: usage}
	for _, c := range calls {
		if c.call.ID == "" {
			// A server that gives no id (some compatible ones): one
			// made here, unique in the conversation, as a provider
			// the conversation may go on with checks its ids are.
			c.call.ID = newCallID()
		}
		tc, err := checkCall(c.call, c.args)
		if err != nil {
			return Response{}, err
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	switch finish {
	case "length":
		r.Stop = StopMaxTokens
	case "tool_calls", "function_call":
		r.Stop = StopToolCalls
	case "content_filter", "refusal":
		r.Stop = StopRefused
	default:
		r.Stop = StopEnd
	}
	if r.Stop == StopEnd && len(r.ToolCalls) > 0 {
		r.Stop = StopToolCalls
	}
	return r, nil
}

// newCallID is a call id of 12 random bytes, in the characters every
// provider takes in one (letters, digits, _).
func newCallID() string {
	var b [12]byte
	rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
