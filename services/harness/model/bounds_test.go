package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestLineBound: a stream line past 1 MiB is refused as bad_response;
// one just under it is read.
func TestLineBound(t *testing.T) {
	chunk := func(textLen int) []byte {
		return []byte(`data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("a", textLen) + `"},"finish_reason":null}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	}
	frame := len(`data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":null}]}`)
	for _, c := range []struct {
		name string
		text int
		ok   bool
	}{
		{"at the bound", MaxLine - frame, true},
		{"one past", MaxLine - frame + 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newProvider(t, recorded{200, hdr("text/event-stream"), chunk(c.text)})
			got, err := mustNew(t, endpointFor(p, FormatOpenAI)).Complete(context.Background(), aRequest(), nil)
			if c.ok {
				if err != nil || len(got.Text) != c.text {
					t.Fatalf("got %d bytes, %v", len(got.Text), err)
				}
				return
			}
			var me *Error
			if !errors.As(err, &me) || me.Kind != KindBadResponse || !strings.Contains(me.Message, "1 MiB") {
				t.Fatalf("got %v, want bad_response past 1 MiB", err)
			}
		})
	}
}

// TestSSELineHeld: a line that never ends is refused once it is past
// MaxLine, having read little more than it: never held whole.
func TestSSELineHeld(t *testing.T) {
	src := &countingReader{r: bytes.NewReader(bytes.Repeat([]byte("a"), 4*MaxLine))}
	_, err := newSSEReader(src).Next()
	if !errors.Is(err, errLine) {
		t.Fatalf("got %v, want the line refused", err)
	}
	if src.n > MaxLine+256<<10 {
		t.Errorf("read %d bytes of a line before refusing it", src.n)
	}
	// A line under the bound, ended, is an event.
	ev, err := newSSEReader(strings.NewReader("data: " + strings.Repeat("a", MaxLine-6) + "\n\n")).Next()
	if err != nil || len(ev.Data) != MaxLine-6 {
		t.Fatalf("a line at the bound: %d bytes, %v", len(ev.Data), err)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestAnswerBound: a whole answer past 32 MiB, streamed in lines each
// well under the line bound, or whole, is refused; the same stream a
// little shorter is read.
func TestAnswerBound(t *testing.T) {
	line := []byte(`data: {"choices":[{"index":0,"delta":{"content":"` + strings.Repeat("b", 64<<10) + `"},"finish_reason":null}]}` + "\n\n")
	end := []byte(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	stream := func(total int) []byte {
		var b bytes.Buffer
		for b.Len()+len(line)+len(end) <= total {
			b.Write(line)
		}
		b.Write(end)
		return b.Bytes()
	}
	// exactly is a stream of exactly n bytes, its last the end of
	// "[DONE]": a comment line pads it.
	exactly := func(n int) []byte {
		b := stream(n - 64<<10)
		pad := n - len(b)
		return append(append([]byte(": "+strings.Repeat("x", pad-3)+"\n"), b[:0:0]...), b...)
	}
	for _, c := range []struct {
		name string
		body []byte
		ok   bool
	}{
		{"at the bound", exactly(MaxAnswer), true},
		{"one byte over", exactly(MaxAnswer + 1), false},
		{"far over", stream(MaxAnswer + 2*len(line)), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name != "far over" && len(c.body) != MaxAnswer && len(c.body) != MaxAnswer+1 {
				t.Fatalf("a test stream of %d bytes", len(c.body))
			}
			p := newProvider(t, recorded{200, hdr("text/event-stream"), c.body})
			_, err := mustNew(t, endpointFor(p, FormatOpenAI)).Complete(context.Background(), aRequest(), nil)
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var me *Error
			if !errors.As(err, &me) || me.Kind != KindBadResponse || !strings.Contains(me.Message, "32 MiB") {
				t.Fatalf("got %v, want bad_response past 32 MiB", err)
			}
		})
	}
	t.Run("whole over", func(t *testing.T) {
		body := append([]byte(`{"choices":[{"index":0,"message":{"content":"`), bytes.Repeat([]byte("c"), MaxAnswer)...)
		body = append(body, `"},"finish_reason":"stop"}]}`...)
		p := newProvider(t, recorded{200, hdr("application/json"), body})
		_, err := mustNew(t, endpointFor(p, FormatOpenAI)).Complete(context.Background(), aRequest(), nil)
		var me *Error
		if !errors.As(err, &me) || me.Kind != KindBadResponse {
			t.Fatalf("got %v, want bad_response past 32 MiB", err)
		}
	})
}

// TestToolArgumentsRefused: a call whose arguments are not one JSON
// object (an array, a string, a number, a cut object, a key twice, two
// keys alike but for case) fails the whole answer; an object, and the
// empty text some servers send for no arguments, pass.
func TestToolArgumentsRefused(t *testing.T) {
	for _, c := range []struct {
		args string
		ok   bool
		want string
	}{
		{`{"argv":["ls"]}`, true, `{"argv":["ls"]}`},
		{` { "a" : 1 } `, true, `{"a":1}`},
		{``, true, `{}`},
		{`[1,2]`, false, ""},
		{`"x"`, false, ""},
		{`42`, false, ""},
		{`{"argv":["ls"`, false, ""},
		{`{"path":"a","path":"b"}`, false, ""},
		{`{"path":"a","Path":"b"}`, false, ""},
		{`{"a":1}{"b":2}`, false, ""},
	} {
		t.Run(c.args, func(t *testing.T) {
			for _, format := range []string{FormatOpenAI, FormatAnthropic} {
				p := newProvider(t, toolCallStream(format, c.args))
				got, err := mustNew(t, endpointFor(p, format)).Complete(context.Background(), aRequest(), nil)
				if c.ok {
					if err != nil || len(got.ToolCalls) != 1 || string(got.ToolCalls[0].Arguments) != c.want {
						t.Errorf("%s: got %+v, %v", format, got, err)
					}
					continue
				}
				var me *Error
				if !errors.As(err, &me) || me.Kind != KindBadResponse || len(got.ToolCalls) != 0 {
					t.Errorf("%s: got %+v, %v; want bad_response", format, got, err)
				}
			}
		})
	}
}

// toolCallStream is one call with args (as text) in format's stream.
func toolCallStream(format, args string) recorded {
	q, _ := json.Marshal(args)
	if format == FormatAnthropic {
		return recorded{200, hdr("text/event-stream"), []byte(`event: message_start
data: {"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"run__command","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":` + string(q) + `}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}

event: message_stop
data: {"type":"message_stop"}

`)}
	}
	return recorded{200, hdr("text/event-stream"), []byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"run__command","arguments":` + string(q) + `}}]},"finish_reason":null}]}

data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`)}
}

// TestStreamEnds: an OpenAI-compatible stream that said its finish
// reason and then ended, without [DONE], after a keep-alive comment or
// not, is whole; one that ended inside an event after it is cut.
func TestStreamEnds(t *testing.T) {
	const finish = `data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}` + "\n\n"
	for _, c := range []struct {
		name, body string
		kind       string
	}{
		{"finish reason, no [DONE]", finish, ""},
		{"a keep-alive after it", finish + ": keep-alive\n", ""},
		{"an event begun after it", finish + "data: {\"choices\":[]}\n", KindCut},
		{"a line begun after it", finish + "data: {\"cho", KindCut},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newProvider(t, recorded{200, hdr("text/event-stream"), []byte(c.body)})
			got, err := mustNew(t, endpointFor(p, FormatOpenAI)).Complete(context.Background(), aRequest(), nil)
			if c.kind == "" {
				if err != nil || got.Text != "hi" || got.Stop != StopEnd {
					t.Fatalf("got %+v, %v", got, err)
				}
				return
			}
			var me *Error
			if !errors.As(err, &me) || me.Kind != c.kind {
				t.Fatalf("got %+v, %v; want %s", got, err, c.kind)
			}
		})
	}
}

// TestCallsWithoutIDs: calls a server sent without ids get ids made
// here, each its own.
func TestCallsWithoutIDs(t *testing.T) {
	body := `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"run__command","arguments":"{}"}},{"index":1,"function":{"name":"file__read","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n"
	seen := map[string]bool{}
	for i := 0; i < 2; i++ {
		p := newProvider(t, recorded{200, hdr("text/event-stream"), []byte(body)})
		got, err := mustNew(t, endpointFor(p, FormatOpenAI)).Complete(context.Background(), aRequest(), nil)
		if err != nil || len(got.ToolCalls) != 2 {
			t.Fatalf("got %+v, %v", got, err)
		}
		for _, c := range got.ToolCalls {
			if !strings.HasPrefix(c.ID, "call_") || seen[c.ID] {
				t.Errorf("call id %q (seen before: %v)", c.ID, seen[c.ID])
			}
			seen[c.ID] = true
		}
	}
}
