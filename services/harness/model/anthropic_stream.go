package model

import (
	"encoding/json"
	"strings"
)

// anEvent is one event of a messages stream; which fields it has
// depends on its type.
type anEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage anUsage `json:"usage"`
	} `json:"message"`
	Index        *int            `json:"index"`
	ContentBlock *anBlockIn      `json:"content_block"`
	Delta        json.RawMessage `json:"delta"`
	Usage        *anUsage        `json:"usage"`
	Error        json.RawMessage `json:"error"`
}

// anBlockIn is a content block received.
type anBlockIn struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type anDelta struct {
	Type        string  `json:"type"`
	Text        string  `json:"text"`
	PartialJSON string  `json:"partial_json"`
	StopReason  *string `json:"stop_reason"`
}

type anUsage struct {
	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	CacheCreationTokens int `json:"cache_creation_input_tokens"`
	CacheReadTokens     int `json:"cache_read_input_tokens"`
}

func (u anUsage) input() int { return u.InputTokens + u.CacheCreationTokens + u.CacheReadTokens }

// anBlockState is a content block being put together.
type anBlockState struct {
	kind    string // text, tool_use, or another the harness doesn't use
	call    ToolCall
	start   json.RawMessage // a tool_use's input as content_block_start gave it
	args    []byte
	stopped bool
}

// anthropicStream puts an answer together from a messages stream's
// events, in the order the API sends them: message_start; for each
// content block its content_block_start, deltas and content_block_stop;
// message_delta; message_stop. ping is ignored, error ends the answer
// with its error, and an event of a type this doesn't know is ignored,
// as the API's versioning says new ones may come.
type anthropicStream struct {
	clean   cleaner
	onText  func(string)
	started bool
	done    bool
	text    strings.Builder
	blocks  []*anBlockState
	stop    string
	usage   Usage
}

func newAnthropicStream(c cleaner, onText func(string)) *anthropicStream {
	return &anthropicStream{clean: c, onText: onText}
}

// Event takes one event: name is the SSE event's name ("" when the
// stream names none), which must be its data's type.
func (s *anthropicStream) Event(name string, data []byte) (done bool, err error) {
	if s.done {
		return true, nil
	}
	var ev anEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return false, badResponse("an event of the stream is not JSON")
	}
	if name != "" && name != ev.Type {
		return false, badResponse("an event named %q holds a %q", name, ev.Type)
	}
	if ev.Type == "error" {
		pe, ok := parseProviderError(data)
		if !ok {
			return false, badResponse("the stream sent an error of no known shape")
		}
		return false, streamError(pe, s.clean)
	}
	if ev.Type == "ping" {
		return false, nil
	}
	if !s.started && ev.Type != "message_start" {
		if knownAnthropicEvent(ev.Type) {
			return false, badResponse("the stream's first event is %q, not message_start", ev.Type)
		}
		return false, nil
	}
	switch ev.Type {
	case "message_start":
		if s.started || ev.Message == nil {
			return false, badResponse("a second or empty message_start")
		}
		s.started = true
		s.usage.InputTokens = ev.Message.Usage.input()
		s.usage.OutputTokens = ev.Message.Usage.OutputTokens
	case "content_block_start":
		return false, s.blockStart(ev)
	case "content_block_delta":
		return false, s.blockDelta(ev)
	case "content_block_stop":
		b, err := s.block(ev.Index)
		if err != nil {
			return false, err
		}
		if b.stopped {
			return false, badResponse("content block %d stopped twice", *ev.Index)
		}
		b.stopped = true
	case "message_delta":
		var d anDelta
		if len(ev.Delta) > 0 {
			if err := json.Unmarshal(ev.Delta, &d); err != nil {
				return false, badResponse("a message_delta's delta is not an object")
			}
		}
		if d.StopReason != nil {
			s.stop = *d.StopReason
		}
		if ev.Usage != nil {
			if in := ev.Usage.input(); in > 0 {
				s.usage.InputTokens = in
			}
			s.usage.OutputTokens = ev.Usage.OutputTokens
		}
	case "message_stop":
		for i, b := range s.blocks {
			if !b.stopped {
				return false, badResponse("the message stopped with content block %d open", i)
			}
		}
		s.done = true
		return true, nil
	}
	return false, nil
}

func knownAnthropicEvent(t string) bool {
	switch t {
	case "message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop":
		return true
	}
	return false
}

// block is the block an event's index names.
func (s *anthropicStream) block(index *int) (*anBlockState, error) {
	if index == nil || *index < 0 || *index >= len(s.blocks) {
		return nil, badResponse("an event names a content block that never started")
	}
	return s.blocks[*index], nil
}

func (s *anthropicStream) blockStart(ev anEvent) error {
	if ev.Index == nil || *ev.Index != len(s.blocks) || ev.ContentBlock == nil {
		return badResponse("a content block starts out of order")
	}
	if len(s.blocks) >= maxCalls*2 {
		return badResponse("an answer with over %d content blocks", maxCalls*2)
	}
	cb := ev.ContentBlock
	b := &anBlockState{kind: cb.Type}
	switch cb.Type {
	case "text":
		if cb.Text != "" {
			s.addText(cb.Text)
		}
	case "tool_use":
		calls := 0
		for _, o := range s.blocks {
			if o.kind == "tool_use" {
				calls++
			}
		}
		if calls >= maxCalls {
			return badResponse("an answer with over %d tool calls", maxCalls)
		}
		b.call = ToolCall{ID: cb.ID, Name: cb.Name}
		b.start = cb.Input
	}
	s.blocks = append(s.blocks, b)
	return nil
}

func (s *anthropicStream) blockDelta(ev anEvent) error {
	b, err := s.block(ev.Index)
	if err != nil {
		return err
	}
	if b.stopped {
		return badResponse("a delta for content block %d after its stop", *ev.Index)
	}
	var d anDelta
	if err := json.Unmarshal(ev.Delta, &d); err != nil {
		return badResponse("a content_block_delta's delta is not an object")
	}
	switch d.Type {
	case "text_delta":
		if b.kind != "text" {
			return badResponse("text for content block %d, a %s", *ev.Index, b.kind)
		}
		s.addText(d.Text)
	case "input_json_delta":
		if b.kind != "tool_use" {
			return badResponse("a call's input for content block %d, a %s", *ev.Index, b.kind)
		}
		b.args = append(b.args, d.PartialJSON...)
	}
	return nil
}

func (s *anthropicStream) addText(t string) {
	s.text.WriteString(t)
	if s.onText != nil && t != "" {
		s.onText(t)
	}
}

// Finish gives the whole answer; cut when the stream ended before
// message_stop.
func (s *anthropicStream) Finish() (Response, error) {
	if !s.done {
		return Response{}, &Error{Kind: KindCut, Message: "the stream ended before message_stop"}
	}
	var calls []ToolCall
	for _, b := range s.blocks {
		if b.kind != "tool_use" {
			continue
		}
		args := b.args
		if len(args) == 0 {
			args = b.start
		}
		calls = append(calls, ToolCall{ID: b.call.ID, Name: b.call.Name, Arguments: args})
	}
	return anthropicResponse(s.text.String(), calls, s.stop, s.usage)
}

// anthropicResponse checks the calls and maps the stop reason.
func anthropicResponse(text string, calls []ToolCall, stop string, usage Usage) (Response, error) {
	r := Response{Text: text, Usage: usage}
	for _, c := range calls {
		if c.ID == "" {
			return Response{}, badResponse("tool call %q has no id", c.Name)
		}
		tc, err := checkCall(ToolCall{ID: c.ID, Name: c.Name}, c.Arguments)
		if err != nil {
			return Response{}, err
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	switch stop {
	case "end_turn", "stop_sequence", "pause_turn":
		r.Stop = StopEnd
	case "max_tokens", "model_context_window_exceeded":
		r.Stop = StopMaxTokens
	case "tool_use":
		r.Stop = StopToolCalls
	case "refusal":
		r.Stop = StopRefused
	case "":
		return Response{}, badResponse("the message ended without a stop reason")
	default:
		r.Stop = StopEnd
	}
	if r.Stop == StopEnd && len(r.ToolCalls) > 0 {
		r.Stop = StopToolCalls
	}
	return r, nil
}
