package builtin

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
)

// bytesPerToken is the estimate usage counts with.
const bytesPerToken = 4

// argsPiece is how many bytes of a call's arguments one chunk carries.
const argsPiece = 16

// completion is one answer, ready to write whole or as a stream.
type completion struct {
	id     string
	model  string
	text   string
	calls  []ToolCall
	finish string // "stop", "tool_calls", "length"
	usage  usage
}

func newCompletion(req *Request, rep reply, seed [32]byte) *completion {
	c := &completion{id: "chatcmpl-" + hex.EncodeToString(seed[:15]), model: req.Model, text: rep.text, calls: rep.calls, finish: "stop"}
	if c.model == "" {
		c.model = ModelName
	}
	if len(c.calls) > 0 {
		c.finish = "tool_calls"
	}
	limit := 0
	if req.MaxTokens != nil {
		limit = *req.MaxTokens
	}
	if req.MaxCompletion != nil {
		limit = *req.MaxCompletion
	}
	if limit > 0 && len(c.calls) == 0 && tokens(len(c.text)) > limit {
		n := limit * bytesPerToken
		for n > 0 && !utf8.RuneStart(c.text[n]) {
			n--
		}
		c.text, c.finish = c.text[:n], "length"
	}
	out := len(c.text)
	for _, k := range c.calls {
		out += len(k.Function.Name) + len(k.Function.Arguments)
	}
	c.usage = usage{PromptTokens: promptTokens(req), CompletionTokens: tokens(out)}
	c.usage.TotalTokens = c.usage.PromptTokens + c.usage.CompletionTokens
	return c
}

func tokens(n int) int { return (n + bytesPerToken - 1) / bytesPerToken }

// promptTokens estimates the request's input: each message's text and
// calls, a few tokens a message for its framing, and each tool's offer.
func promptTokens(req *Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Text()) + len(m.Role) + 3*bytesPerToken
		for _, k := range m.ToolCalls {
			n += len(k.Function.Name) + len(k.Function.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Function.Name) + len(t.Function.Description) + len(t.Function.Parameters)
	}
	return tokens(n)
}

// whole writes the answer as one chat.completion.
func (c *completion) whole(w http.ResponseWriter) {
	msg := answerMessage{Role: "assistant", Annotations: []struct{}{}}
	if len(c.calls) > 0 {
		msg.ToolCalls = c.calls
	} else {
		msg.Content = &c.text
	}
	writeJSON(w, http.StatusOK, completionBody{ID: c.id, Object: "chat.completion", Created: created, Model: c.model,
		Choices: []wholeChoice{{Index: 0, Message: msg, Logprobs: null, FinishReason: c.finish}},
		Usage:   c.usage, SystemFingerprint: systemFingerprint})
}

// stream writes the answer as server-sent events, as OpenAI streams:
// the role, the text a word at a time or each call by index (id, type
// and name first, then its arguments in pieces), a chunk with the
// finish reason, usage when asked, then [DONE].
func (c *completion) stream(w http.ResponseWriter, withUsage bool) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(ch []chunkChoice, u *usage) bool {
		b, err := json.Marshal(chunkBody{ID: c.id, Object: "chat.completion.chunk", Created: created, Model: c.model,
			SystemFingerprint: systemFingerprint, Choices: ch, Usage: u, withUsage: withUsage})
		if err != nil {
			return false
		}
		if _, err := w.Write(append(append([]byte("data: "), b...), '\n', '\n')); err != nil {
			return false
		}
		if fl != nil {
			fl.Flush()
		}
		return true
	}
	one := func(d delta, finish *string) []chunkChoice {
		return []chunkChoice{{Index: 0, Delta: d, Logprobs: null, FinishReason: finish}}
	}
	first := delta{Role: "assistant", Content: jsonString("")}
	if len(c.calls) > 0 {
		first.Content = null
	}
	if !send(one(first, nil), nil) {
		return
	}
	for _, piece := range wordPieces(c.text) {
		if !send(one(delta{Content: jsonString(piece)}, nil), nil) {
			return
		}
	}
	for i, k := range c.calls {
		if !send(one(delta{ToolCalls: []deltaCall{{Index: i, ID: k.ID, Type: k.Type,
			Function: deltaFunction{Name: k.Function.Name}}}}, nil), nil) {
			return
		}
		for _, a := range bytePieces(k.Function.Arguments, argsPiece) {
			if !send(one(delta{ToolCalls: []deltaCall{{Index: i, Function: deltaFunction{Arguments: a}}}}, nil), nil) {
				return
			}
		}
	}
	finish := c.finish
	if !send(one(delta{}, &finish), nil) {
		return
	}
	if withUsage {
		u := c.usage
		if !send([]chunkChoice{}, &u) {
			return
		}
	}
	w.Write([]byte("data: [DONE]\n\n"))
	if fl != nil {
		fl.Flush()
	}
}

// wordPieces splits text into words, each with the blanks after it.
func wordPieces(text string) []string {
	var out []string
	for len(text) > 0 {
		i := strings.IndexAny(text, " \n")
		if i < 0 {
			out = append(out, text)
			break
		}
		j := i
		for j < len(text) && (text[j] == ' ' || text[j] == '\n') {
			j++
		}
		out = append(out, text[:j])
		text = text[j:]
	}
	return out
}

// bytePieces splits s into pieces of about n bytes, never inside a
// character.
func bytePieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		if i == 0 {
			i = n
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if len(s) > 0 {
		out = append(out, s)
	}
	return out
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
