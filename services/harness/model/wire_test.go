package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestKeyInProviderHeaderOnly: the key goes in the provider's own header
// (Authorization: Bearer; x-api-key with anthropic-version) and nowhere
// else: not the URL, not the body, not another header.
func TestKeyInProviderHeaderOnly(t *testing.T) {
	for _, c := range []struct {
		format, file, path, header, value string
	}{
		{FormatOpenAI, "openai/whole_text.http", "/v1/chat/completions", "Authorization", "Bearer " + testKey},
		{FormatAnthropic, "anthropic/whole_text.http", "/v1/messages", "X-Api-Key", testKey},
	} {
		t.Run(c.format, func(t *testing.T) {
			p := newProvider(t, loadRecorded(t, c.file))
			if _, err := mustNew(t, endpointFor(p, c.format)).Complete(context.Background(), aRequest(), nil); err != nil {
				t.Fatal(err)
			}
			got := p.requests()[0]
			if got.Method != "POST" || got.Path != c.path {
				t.Errorf("sent %s %s, want POST %s", got.Method, got.Path, c.path)
			}
			if v := got.Header.Get(c.header); v != c.value {
				t.Errorf("%s = %q, want %q", c.header, v, c.value)
			}
			for k, vs := range got.Header {
				if k == c.header {
					continue
				}
				for _, v := range vs {
					if strings.Contains(v, testKey) {
						t.Errorf("the key is in header %s too", k)
					}
				}
			}
			if strings.Contains(got.URL, testKey) || bytes.Contains(got.Body, []byte(testKey)) {
				t.Error("the key is in the URL or the body")
			}
			if c.format == FormatAnthropic && got.Header.Get("Anthropic-Version") != anthropicVersion {
				t.Errorf("anthropic-version = %q", got.Header.Get("Anthropic-Version"))
			}
		})
	}
}

// TestErrorNeverCarriesKey: a provider that echoes the key (whole, in
// its error's words, in a text body, in a stream's error, masked as
// OpenAI masks it) is answered with an Error whose message keeps its
// other words and holds no key.
func TestErrorNeverCarriesKey(t *testing.T) {
	for _, c := range []struct {
		name, format string
		ans          recorded
	}{
		{"openai json", FormatOpenAI, recorded{401, hdr("application/json"), []byte(`{"error":{"message":"bad key ` + testKey + ` given","type":"invalid_request_error","code":"invalid_api_key"}}`)}},
		{"anthropic json", FormatAnthropic, recorded{401, hdr("application/json"), []byte(`{"type":"error","error":{"type":"authentication_error","message":"bad key ` + testKey + ` given"}}`)}},
		{"text body", FormatOpenAI, recorded{502, hdr("text/plain"), []byte("bad key " + testKey + " given\n")}},
		{"split by a control", FormatOpenAI, recorded{401, hdr("text/plain"), []byte("bad key " + testKey[:9] + "\x1b" + testKey[9:] + " given")}},
		{"masked", FormatOpenAI, recorded{401, hdr("application/json"), []byte(`{"error":{"message":"bad key sk-proj-****abcd given","type":"invalid_request_error"}}`)}},
		{"bearer echoed", FormatOpenAI, recorded{400, hdr("application/json"), []byte(`{"error":{"message":"bad key Bearer abc.def given","type":"invalid_request_error"}}`)}},
		{"stream error", FormatAnthropic, recorded{200, hdr("text/event-stream"), []byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"bad key " + testKey + " given\"}}\n\n")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newProvider(t, c.ans)
			_, err := mustNew(t, endpointFor(p, c.format)).Complete(context.Background(), aRequest(), nil)
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("got %v", err)
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "Kq93x") || strings.Contains(err.Error(), "abcd") || strings.Contains(err.Error(), "abc.def") {
				t.Errorf("the key is in the error: %q", err.Error())
			}
			if !strings.Contains(me.Message, "bad key") || !strings.Contains(me.Message, "given") {
				t.Errorf("the provider's other words are gone: %q", me.Message)
			}
		})
	}
}

func hdr(ct string) map[string][]string { return map[string][]string{"Content-Type": {ct}} }

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

// TestGarbage: an answer that is not the provider's format is
// bad_response, never an empty answer taken as whole.
func TestGarbage(t *testing.T) {
	for _, c := range []struct {
		name, format string
		ans          recorded
	}{
		{"a 2xx other than 200", FormatOpenAI, recorded{206, hdr("application/json"), []byte(`{"choices":[]}`)}},
		{"html page", FormatOpenAI, recorded{200, hdr("text/html"), []byte("<html><body>captive portal</body></html>")}},
		{"json of another shape", FormatOpenAI, recorded{200, hdr("application/json"), []byte(`{"hello":"world"}`)}},
		{"chunk not json", FormatOpenAI, recorded{200, hdr("text/event-stream"), []byte("data: {not json\n\ndata: [DONE]\n\n")}},
		{"second choice", FormatOpenAI, recorded{200, hdr("text/event-stream"), []byte(`data: {"choices":[{"index":1,"delta":{"content":"x"}}]}` + "\n\ndata: [DONE]\n\n")}},
		{"bad index type", FormatOpenAI, recorded{200, hdr("text/event-stream"), []byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":"zero"}]}}]}` + "\n\ndata: [DONE]\n\n")}},
		{"anthropic no message_start", FormatAnthropic, recorded{200, hdr("text/event-stream"), []byte("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")}},
		{"anthropic name and type differ", FormatAnthropic, recorded{200, hdr("text/event-stream"), []byte("event: message_stop\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n")}},
		{"anthropic delta to unstarted block", FormatAnthropic, recorded{200, hdr("text/event-stream"), []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n")}},
		{"anthropic input to a text block", FormatAnthropic, recorded{200, hdr("text/event-stream"), []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n")}},
		{"anthropic stop with a block open", FormatAnthropic, recorded{200, hdr("text/event-stream"), []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")}},
		{"anthropic whole of another shape", FormatAnthropic, recorded{200, hdr("application/json"), []byte(`{"type":"completion","completion":"hi"}`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newProvider(t, c.ans)
			got, err := mustNew(t, endpointFor(p, c.format)).Complete(context.Background(), aRequest(), nil)
			var me *Error
			if !errors.As(err, &me) || me.Kind != KindBadResponse {
				t.Fatalf("got %+v, %v; want bad_response", got, err)
			}
		})
	}
}

// TestConnectionCut: a server that drops the connection mid-stream (no
// clean end of the chunked body) is cut.
func TestConnectionCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"half"},"finish_reason":null}]}`+"\n\n")
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()
	var streamed string
	got, err := mustNew(t, Endpoint{Format: FormatOpenAI, BaseURL: srv.URL + "/v1", Model: "m", HTTPClient: srv.Client()}).
		Complete(context.Background(), aRequest(), func(s string) { streamed += s })
	var me *Error
	if !errors.As(err, &me) || me.Kind != KindCut || got.Text != "" {
		t.Fatalf("got %+v, %v; want cut", got, err)
	}
	if streamed != "half" {
		t.Errorf("onText got %q before the cut", streamed)
	}
}

// TestNoRedirect: a redirect is an error, its target never asked.
func TestNoRedirect(t *testing.T) {
	target := newProvider(t, loadRecorded(t, "openai/whole_text.http"))
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	hc, err := HTTPClient()
	if err != nil {
		t.Fatal(err)
	}
	_, err = mustNew(t, Endpoint{Format: FormatOpenAI, BaseURL: redirect.URL + "/v1", Model: "m", Key: testKey, HTTPClient: hc}).Complete(context.Background(), aRequest(), nil)
	var me *Error
	if !errors.As(err, &me) || me.Status != 307 || me.Kind != KindBadResponse {
		t.Fatalf("got %v; want the redirect refused", err)
	}
	if n := len(target.requests()); n != 0 {
		t.Errorf("the redirect's target was asked %d times", n)
	}
	// The same client reaches the target itself.
	if _, err := mustNew(t, Endpoint{Format: FormatOpenAI, BaseURL: target.URL + "/v1", Model: "m", HTTPClient: hc}).Complete(context.Background(), aRequest(), nil); err != nil {
		t.Fatal(err)
	}
}

// TestOff: a model whose server isn't listening is off, and so is one
// the sandbox's proxy could not reach (its 502 of kind upstream); the
// proxy's other refusals are refused, with its reason and hint.
func TestOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = mustNew(t, Endpoint{Format: FormatOpenAI, BaseURL: "http://" + addr + "/v1", Model: "m"}).Complete(context.Background(), aRequest(), nil)
	var me *Error
	if !errors.As(err, &me) || me.Kind != KindOff {
		t.Fatalf("closed port: got %v, want off", err)
	}

	refused := func(rule, body string) recorded {
		return recorded{502, map[string][]string{"Content-Type": {"text/plain"}, "X-Lnk-Refused": {rule}}, []byte(body)}
	}
	p := newProvider(t, refused("upstream", "lnk: refused: 127.0.0.1 did not answer on port 11434: connection refused\n"))
	_, err = mustNew(t, endpointFor(p, FormatOpenAI)).Complete(context.Background(), aRequest(), nil)
	if !errors.As(err, &me) || me.Kind != KindOff || !strings.Contains(me.Message, "did not answer") {
		t.Fatalf("proxy's upstream: got %v, want off", err)
	}
	p = newProvider(t, recorded{403, map[string][]string{"Content-Type": {"text/plain"}, "X-Lnk-Refused": {"port"}},
		[]byte("lnk: refused: port 11434 is not granted\nhint: lnk agent allow a --localhost 11434\n")})
	_, err = mustNew(t, endpointFor(p, FormatOpenAI)).Complete(context.Background(), aRequest(), nil)
	if !errors.As(err, &me) || me.Kind != KindRefused || !strings.Contains(me.Message, "hint: lnk agent allow") {
		t.Fatalf("proxy's refusal: got %v, want refused with its hint", err)
	}
}

// TestNewRefuses: a format New doesn't speak, and a base URL that is
// not http(s) or carries credentials, a query or a fragment.
func TestNewRefuses(t *testing.T) {
	for _, e := range []Endpoint{
		{Format: "gemini", BaseURL: "http://127.0.0.1:1/v1"},
		{Format: FormatOpenAI, BaseURL: "file:///etc/passwd"},
		{Format: FormatOpenAI, BaseURL: "http://user:pw@127.0.0.1:1/v1"},
		{Format: FormatOpenAI, BaseURL: "http://127.0.0.1:1/v1?key=x"},
		{Format: FormatOpenAI, BaseURL: "http://127.0.0.1:1/v1#x"},
		{Format: FormatOpenAI, BaseURL: "127.0.0.1:1/v1"},
	} {
		if _, err := New(e); err == nil {
			t.Errorf("New(%+v) was taken", e)
		}
	}
	if _, err := New(Endpoint{Format: FormatAnthropic, BaseURL: "https://api.anthropic.com"}); err != nil {
		t.Errorf("a plain https base was refused: %v", err)
	}
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
