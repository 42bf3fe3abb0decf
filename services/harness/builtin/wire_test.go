package builtin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestStreamIsOpenAIChunks: a streamed answer in words is OpenAI's SSE:
// text/event-stream, one chat.completion.chunk a "data:" line (the role
// first, then the words), a finish chunk, usage on a last chunk with no
// choices and null before it, then [DONE]; put together, the same text,
// id, finish and usage as the same request answered whole.
func TestStreamIsOpenAIChunks(t *testing.T) {
	url := serve(t, Options{})
	s := post(t, url, request(true, allTools, user("hello there, model")))
	if s.status != 200 || s.header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("status %d content-type %q", s.status, s.header.Get("Content-Type"))
	}
	if d := s.chunks[0].Choices[0].Delta; d.Role != "assistant" || d.Content == nil || *d.Content != "" {
		t.Fatalf("first chunk %+v: want the role and empty content", d)
	}
	if len(s.chunks) < 4 {
		t.Fatalf("%d chunks: the words are not streamed one by one", len(s.chunks))
	}
	last := s.chunks[len(s.chunks)-1]
	if len(last.Choices) != 0 || last.Usage == nil {
		t.Fatalf("the last chunk is not usage alone: %+v", last)
	}
	for _, c := range s.chunks[:len(s.chunks)-1] {
		if c.Usage != nil {
			t.Fatalf("usage before the last chunk")
		}
	}
	if !bytes.Contains(s.raw, []byte(`"usage":null`)) || !bytes.HasSuffix(s.raw, []byte("data: [DONE]\n\n")) {
		t.Fatalf("usage null or [DONE] missing:\n%s", s.raw)
	}
	w := post(t, url, request(false, allTools, user("hello there, model")))
	if s.text != w.text || s.finish != "stop" || w.finish != "stop" || *s.usage != *w.usage {
		t.Fatalf("streamed %q %s %+v, whole %q %s %+v", s.text, s.finish, s.usage, w.text, w.finish, w.usage)
	}
	if !strings.Contains(w.text, `"hello there, model"`) {
		t.Fatalf("the answer doesn't echo the message's first line: %q", w.text)
	}
	if w.usage.PromptTokens < 1 || w.usage.CompletionTokens < 1 || w.usage.TotalTokens != w.usage.PromptTokens+w.usage.CompletionTokens {
		t.Fatalf("usage %+v", w.usage)
	}
	// Without stream_options, no usage member at all on a chunk.
	body := strings.Replace(request(true, nil, user("hi")), `,"stream_options":{"include_usage":true}`, "", 1)
	if p := post(t, url, body); bytes.Contains(p.raw, []byte(`"usage"`)) || p.text == "" {
		t.Fatalf("usage sent unasked, or no text:\n%s", p.raw)
	}
}

// TestStreamToolCallsByIndex: a call streams as OpenAI's indexed deltas:
// the first with id, type and name and empty arguments, the rest more
// of the arguments; content null beside it; finish "tool_calls". Put
// together it is the call answered whole, with arguments that are one
// JSON object.
func TestStreamToolCallsByIndex(t *testing.T) {
	url := serve(t, Options{})
	s := post(t, url, request(true, allTools, user(`run grep -r "two words" 'a b' c\ d`)))
	w := post(t, url, request(false, allTools, user(`run grep -r "two words" 'a b' c\ d`)))
	if s.finish != "tool_calls" || w.finish != "tool_calls" || len(s.calls) != 1 || len(w.calls) != 1 {
		t.Fatalf("streamed %s %+v, whole %s %+v", s.finish, s.calls, w.finish, w.calls)
	}
	if !bytes.Contains(s.raw, []byte(`"delta":{"role":"assistant","content":null}`)) {
		t.Fatalf("the first chunk of a call has no null content:\n%s", s.raw)
	}
	if w.whole.Choices[0].Message.Content != nil || s.text != "" {
		t.Fatalf("words beside a call")
	}
	sc, wc := s.calls[0], w.calls[0]
	if sc.Function != wc.Function || !strings.HasPrefix(sc.ID, "call_") || wc.Type != "function" || !strings.HasPrefix(wc.ID, "call_") {
		t.Fatalf("streamed %+v, whole %+v", sc, wc)
	}
	var args struct{ Argv []string }
	if err := json.Unmarshal([]byte(wc.Function.Arguments), &args); err != nil {
		t.Fatal(err)
	}
	want := []string{"grep", "-r", "two words", "a b", "c d"}
	if wc.Function.Name != "run__command" || strings.Join(args.Argv, "|") != strings.Join(want, "|") {
		t.Fatalf("%s %q, want run__command %q", wc.Function.Name, args.Argv, want)
	}
	n := 0
	for _, c := range s.chunks {
		for _, ch := range c.Choices {
			n += len(ch.Delta.ToolCalls)
		}
	}
	if n < 3 {
		t.Fatalf("the arguments came in %d deltas: not streamed in pieces", n)
	}
}

// TestSameRequestSameBytes: the same body gives the same bytes, whole and
// streamed (ids from the request's hash, no clock); another body another id.
func TestSameRequestSameBytes(t *testing.T) {
	url := serve(t, Options{})
	for _, stream := range []bool{false, true} {
		for _, msg := range []string{"run ls work", "hello"} {
			body := request(stream, allTools, user(msg))
			a, b := post(t, url, body), post(t, url, body)
			if !bytes.Equal(a.raw, b.raw) {
				t.Fatalf("stream=%v %q: two answers differ:\n%s\n%s", stream, msg, a.raw, b.raw)
			}
			c := post(t, url, request(stream, allTools, user(msg+" ")))
			if c.id == a.id {
				t.Fatalf("two requests, one id %s", a.id)
			}
		}
	}
}

// TestBounds: past 16 MiB is 413 (declared or not), not JSON 400, an
// unknown path 404, a wrong method 405, each in OpenAI's error body; a
// body of exactly 16 MiB is answered.
func TestBounds(t *testing.T) {
	url := serve(t, Options{})
	pad := func(total int) string {
		head := `{"model":"m","messages":[{"role":"user","content":"`
		tail := `"}]}`
		return head + strings.Repeat("a", total-len(head)-len(tail)) + tail
	}
	if p := post(t, url, pad(MaxBody)); p.status != 200 || p.text == "" {
		t.Fatalf("a body of exactly %d bytes: %d %s", MaxBody, p.status, p.raw[:min(len(p.raw), 300)])
	}
	p := post(t, url, pad(MaxBody+1))
	if p.status != 413 || p.errBody.Error.Code == nil || *p.errBody.Error.Code != "request_too_large" {
		t.Fatalf("past %d bytes: %d %s", MaxBody, p.status, p.raw)
	}
	// Chunked, so no length is declared: cut at the limit all the same.
	pr, pw := io.Pipe()
	go func() { pw.Write([]byte(pad(MaxBody + 1))); pw.Close() }()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", pr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 || resp.ContentLength == 0 {
		t.Fatalf("chunked past the limit: %d", resp.StatusCode)
	}
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		param                    string
	}{
		{"not JSON", "POST", "/v1/chat/completions", `model: m`, 400, ""},
		{"two objects", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}]}{}`, 400, ""},
		{"an array", "POST", "/v1/chat/completions", `[1]`, 400, ""},
		{"unknown field", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"temprature":1}`, 400, "temprature"},
		{"a member twice", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"Messages":[]}`, 400, "Messages"},
		{"no messages", "POST", "/v1/chat/completions", `{"model":"m","messages":[]}`, 400, "messages"},
		{"bad role", "POST", "/v1/chat/completions", `{"messages":[{"role":"owner","content":"a"}]}`, 400, "messages[0].role"},
		{"tool without id", "POST", "/v1/chat/completions", `{"messages":[{"role":"tool","content":"a"}]}`, 400, "messages[0].tool_call_id"},
		{"bad tool name", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":"a b"}}]}`, 400, "tools[0].function.name"},
		{"tool twice", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"a"}}]}`, 400, "tools[1].function.name"},
		{"n of 2", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a"}],"n":2}`, 400, "n"},
		{"unknown path", "POST", "/v1/completions", `{}`, 404, ""},
		{"root", "GET", "/", ``, 404, ""},
		{"GET completions", "GET", "/v1/chat/completions", ``, 405, ""},
		{"POST models", "POST", "/v1/models", `{}`, 405, ""},
		{"another model", "GET", "/v1/models/gpt-4o", ``, 404, "model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, url+tc.path, strings.NewReader(tc.body))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var e oaError
			strict(t, raw, &e, "error")
			if resp.StatusCode != tc.status || e.Error.Message == "" || e.Error.Type != "invalid_request_error" {
				t.Fatalf("%d %s, want %d", resp.StatusCode, raw, tc.status)
			}
			if got := ""; e.Error.Param != nil {
				got = *e.Error.Param
				if got != tc.param {
					t.Fatalf("param %q, want %q", got, tc.param)
				}
			} else if tc.param != "" {
				t.Fatalf("no param, want %q", tc.param)
			}
		})
	}
	// The positive control of the refusals above: every documented field
	// OpenAI's clients send is taken.
	ok := `{"model":"m","messages":[{"role":"developer","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:,"}}]}],"temperature":0.2,"top_p":1,"n":1,"stop":["x"],"seed":1,"user":"u","tool_choice":"auto","parallel_tool_calls":true,"max_completion_tokens":100,"presence_penalty":0,"frequency_penalty":0,"logit_bias":{},"response_format":{"type":"text"},"metadata":{},"store":false}`
	if p := post(t, url, ok); p.status != 200 || !strings.Contains(p.text, `"hi"`) {
		t.Fatalf("%d %s", p.status, p.raw)
	}
}

// TestModelsList: GET /v1/models lists the built-in as OpenAI lists models.
func TestModelsList(t *testing.T) {
	url := serve(t, Options{})
	for _, path := range []string{"/v1/models", "/v1/models/" + ModelName} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		type model struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Created int64  `json:"created"`
			OwnedBy string `json:"owned_by"`
		}
		var m model
		if path == "/v1/models" {
			var l struct {
				Object string  `json:"object"`
				Data   []model `json:"data"`
			}
			strict(t, raw, &l, "object", "data")
			if l.Object != "list" || len(l.Data) != 1 {
				t.Fatalf("%s", raw)
			}
			m = l.Data[0]
		} else {
			strict(t, raw, &m, "id", "object", "created", "owned_by")
		}
		if resp.StatusCode != 200 || m.ID != ModelName || m.Object != "model" || m.OwnedBy != "link" {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, raw)
		}
	}
}

// TestMaxTokensCutsWords: an answer in words past max_tokens is cut
// there, finish "length"; within it, whole ("stop").
func TestMaxTokensCutsWords(t *testing.T) {
	url := serve(t, Options{})
	for _, stream := range []bool{false, true} {
		b := strings.Replace(request(stream, nil, user("hello")), `"model"`, `"max_tokens":3,"model"`, 1)
		p := post(t, url, b)
		if p.finish != "length" || len(p.text) > 3*bytesPerToken || p.usage.CompletionTokens > 3 {
			t.Fatalf("stream=%v: %s %q %+v", stream, p.finish, p.text, p.usage)
		}
		b = strings.Replace(request(stream, nil, user("hello")), `"model"`, `"max_tokens":1000,"model"`, 1)
		if p := post(t, url, b); p.finish != "stop" {
			t.Fatalf("within max_tokens: %s", p.finish)
		}
	}
}

// TestClientGoneMidStream: a client that leaves mid-stream ends that
// answer only; the server answers the next.
func TestClientGoneMidStream(t *testing.T) {
	url := serve(t, Options{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	body := request(true, nil, user(strings.Repeat("word ", 5000)))
	conn.Write([]byte("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body))
	buf := make([]byte, 100)
	conn.Read(buf)
	conn.Close()
	if p := post(t, url, request(false, nil, user("still there?"))); p.status != 200 {
		t.Fatalf("%d", p.status)
	}
}

// TestRefusalsLoggedOnce: each refused request is one log line with its
// status and why, never a word of its messages; an answered one logs
// nothing.
func TestRefusalsLoggedOnce(t *testing.T) {
	var lines []string
	var mu sync.Mutex
	url := serve(t, Options{Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(f, a...))
	}})
	post(t, url, request(false, allTools, user("SECRET-1 run ls")))
	post(t, url, request(true, allTools, user("SECRET-1 hello")))
	if len(lines) != 0 {
		t.Fatalf("answers logged: %q", lines)
	}
	post(t, url, `{"messages":[{"role":"owner","content":"SECRET-2"}]}`)
	post(t, url, `{"messages":[{"role":"user","content":"SECRET-3"}],"bogus\u001b[31m":1}`)
	http.Get(url + "/v1/nothing")
	want := []string{
		`refused POST /v1/chat/completions: 400 messages[0].role "owner" is not system, developer, user, assistant or tool`,
		`refused POST /v1/chat/completions: 400 the request does not decode: unrecognized request argument "bogus\x1b[31m"`,
		`refused GET /v1/nothing: 404 Invalid URL (GET /v1/nothing)`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	for i, l := range lines {
		if l != want[i] || strings.Contains(l, "SECRET") || strings.ContainsRune(l, 0x1b) {
			t.Fatalf("line %d: %q, want %q", i, l, want[i])
		}
	}
}
