package model

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestRecordedAnswers reads each provider's documented answers, served
// by a local server: text and tool calls streamed and whole, with their
// usage and stop reasons; onText gets exactly the answer's text.
func TestRecordedAnswers(t *testing.T) {
	for _, c := range []struct {
		file, format string
		want         Response
	}{
		{"openai/stream_text.http", FormatOpenAI, Response{Text: "The folder holds three files: a.txt, b.md and todo.md.", Stop: StopEnd, Usage: Usage{57, 14}}},
		{"openai/stream_tool_calls.http", FormatOpenAI, Response{Stop: StopToolCalls, Usage: Usage{412, 38}, ToolCalls: []ToolCall{
			{ID: "call_Rk2mWq8", Name: "run__command", Arguments: json.RawMessage(`{"argv":["ls","work"]}`)},
			{ID: "call_Zp4Lx0b", Name: "file__read", Arguments: json.RawMessage(`{"path":"work/todo.md"}`)}}}},
		{"openai/whole_text.http", FormatOpenAI, Response{Text: "Done: the note is written.", Stop: StopEnd, Usage: Usage{19, 7}}},
		{"openai/whole_tool_calls.http", FormatOpenAI, Response{Stop: StopToolCalls, Usage: Usage{230, 21}, ToolCalls: []ToolCall{
			{ID: "call_W8hT2d", Name: "file__write", Arguments: json.RawMessage(`{"path":"work/todo.md","content":"- buy milk\n"}`)}}}},
		{"llamacpp/stream_tool_call.http", FormatOpenAI, Response{Stop: StopToolCalls, Usage: Usage{301, 18}, ToolCalls: []ToolCall{
			{ID: "x7Yk2Pq", Name: "memory__remember", Arguments: json.RawMessage(`{"text":"the owner likes tea"}`)}}}},
		{"ollama/stream_text.http", FormatOpenAI, Response{Text: "Hello there.", Stop: StopEnd, Usage: Usage{26, 3}}},
		{"anthropic/stream_text.http", FormatAnthropic, Response{Text: "Your note is in work/todo.md.", Stop: StopEnd, Usage: Usage{25, 11}}},
		{"anthropic/stream_tool_use.http", FormatAnthropic, Response{Text: "I'll list the work folder.", Stop: StopToolCalls, Usage: Usage{600, 57}, ToolCalls: []ToolCall{
			{ID: "toolu_01A9bQ", Name: "run__command", Arguments: json.RawMessage(`{"argv":["ls","work"]}`)}}}},
		{"anthropic/whole_tool_use.http", FormatAnthropic, Response{Text: "Reading it now.", Stop: StopToolCalls, Usage: Usage{310, 42}, ToolCalls: []ToolCall{
			{ID: "toolu_01WhOle", Name: "file__read", Arguments: json.RawMessage(`{"path":"work/todo.md"}`)}}}},
		{"anthropic/whole_text.http", FormatAnthropic, Response{Text: "Hello! How can I help?", Stop: StopEnd, Usage: Usage{12, 8}}},
	} {
		t.Run(c.file, func(t *testing.T) {
			p := newProvider(t, loadRecorded(t, c.file))
			cl := mustNew(t, endpointFor(p, c.format))
			var streamed strings.Builder
			got, err := cl.Complete(context.Background(), aRequest(), func(s string) { streamed.WriteString(s) })
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("answer\n got %+v\nwant %+v", got, c.want)
			}
			if streamed.String() != c.want.Text {
				t.Errorf("onText got %q, want %q", streamed.String(), c.want.Text)
			}
		})
	}
}

// TestRecordedErrors maps each provider's documented errors, by status
// and body, to an Error of its kind, with the provider's words and its
// retry-after.
func TestRecordedErrors(t *testing.T) {
	for _, c := range []struct {
		file, format string
		status       int
		kind         string
		retry        time.Duration
		words        string
	}{
		{"openai/400_context_length.http", FormatOpenAI, 400, KindContextLength, 0, "maximum context length is 128000"},
		{"openai/400_bad_request.http", FormatOpenAI, 400, KindBadRequest, 0, "no tool call with this id"},
		{"openai/401_auth.http", FormatOpenAI, 401, KindAuth, 0, "Incorrect API key provided"},
		{"openai/403_forbidden.http", FormatOpenAI, 403, KindForbidden, 0, "does not have access"},
		{"openai/404_model.http", FormatOpenAI, 404, KindNotFound, 0, "does not exist"},
		{"openai/413_too_large.http", FormatOpenAI, 413, KindTooLarge, 0, "Request too large"},
		{"openai/429_rate_limit.http", FormatOpenAI, 429, KindRateLimit, 19500 * time.Millisecond, "Rate limit reached"},
		{"openai/500_server.http", FormatOpenAI, 500, KindServer, 0, "server had an error"},
		{"openai/503_overloaded.http", FormatOpenAI, 503, KindOverloaded, 3 * time.Second, "overloaded"},
		{"openai/stream_error.http", FormatOpenAI, 0, KindServer, 0, "server had an error"},
		{"llamacpp/400_context_length.http", FormatOpenAI, 400, KindContextLength, 0, "exceeds the available context size"},
		{"ollama/404_not_pulled.http", FormatOpenAI, 404, KindNotFound, 0, "try pulling it first"},
		// A model that takes no tools fails each message while a tool
		// is on (security.txt, Limits), with the runtime's words.
		{"ollama/400_no_tools.http", FormatOpenAI, 400, KindBadRequest, 0, "does not support tools"},
		{"anthropic/400_context_length.http", FormatAnthropic, 400, KindContextLength, 0, "prompt is too long"},
		{"anthropic/400_bad_request.http", FormatAnthropic, 400, KindBadRequest, 0, "unexpected tool_use_id"},
		{"anthropic/401_auth.http", FormatAnthropic, 401, KindAuth, 0, "invalid x-api-key"},
		{"anthropic/403_forbidden.http", FormatAnthropic, 403, KindForbidden, 0, "does not have permission"},
		{"anthropic/404_model.http", FormatAnthropic, 404, KindNotFound, 0, "claude-imaginary-9"},
		{"anthropic/413_too_large.http", FormatAnthropic, 413, KindTooLarge, 0, "maximum allowed number of bytes"},
		{"anthropic/429_rate_limit.http", FormatAnthropic, 429, KindRateLimit, 7 * time.Second, "exceed the rate limit"},
		{"anthropic/500_server.http", FormatAnthropic, 500, KindServer, 0, "Internal server error"},
		{"anthropic/529_overloaded.http", FormatAnthropic, 529, KindOverloaded, 0, "Overloaded"},
		{"anthropic/stream_error_overloaded.http", FormatAnthropic, 0, KindOverloaded, 0, "Overloaded"},
	} {
		t.Run(c.file, func(t *testing.T) {
			p := newProvider(t, loadRecorded(t, c.file))
			cl := mustNew(t, endpointFor(p, c.format))
			_, err := cl.Complete(context.Background(), aRequest(), nil)
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T), want a *model.Error", err, err)
			}
			if me.Status != c.status || me.Kind != c.kind || me.RetryAfter != c.retry {
				t.Errorf("got status %d kind %s retry %s, want %d %s %s", me.Status, me.Kind, me.RetryAfter, c.status, c.kind, c.retry)
			}
			if !strings.Contains(me.Message, c.words) {
				t.Errorf("message %q lacks the provider's words %q", me.Message, c.words)
			}
			if strings.ContainsAny(me.Message, "\n\r\x1b") {
				t.Errorf("message %q is not one clean line", me.Message)
			}
		})
	}
}

// TestRecordedCut: a stream that ends mid-event, or before its last
// event, is cut, never a half answer; the text already streamed was
// given to onText, but the Response is empty.
func TestRecordedCut(t *testing.T) {
	for _, c := range []struct{ file, format string }{
		{"openai/stream_cut.http", FormatOpenAI},
		{"openai/stream_cut_between.http", FormatOpenAI},
		{"anthropic/stream_cut.http", FormatAnthropic},
	} {
		t.Run(c.file, func(t *testing.T) {
			p := newProvider(t, loadRecorded(t, c.file))
			cl := mustNew(t, endpointFor(p, c.format))
			got, err := cl.Complete(context.Background(), aRequest(), nil)
			var me *Error
			if !errors.As(err, &me) || me.Kind != KindCut {
				t.Fatalf("got %+v, %v; want a cut Error", got, err)
			}
			if !reflect.DeepEqual(got, Response{}) {
				t.Errorf("a cut stream gave an answer: %+v", got)
			}
		})
	}
}
