package model

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

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
	// The default client, and one given that would follow redirects.
	for _, given := range []*http.Client{nil, redirect.Client()} {
		_, err = mustNew(t, Endpoint{Format: FormatOpenAI, BaseURL: redirect.URL + "/v1", Model: "m", Key: testKey, HTTPClient: given}).Complete(context.Background(), aRequest(), nil)
		var me *Error
		if !errors.As(err, &me) || me.Status != 307 || me.Kind != KindBadResponse {
			t.Fatalf("got %v; want the redirect refused", err)
		}
		if n := len(target.requests()); n != 0 {
			t.Errorf("the redirect's target was asked %d times", n)
		}
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

// TestNewRefuses: a format New doesn't speak, a base URL that is not
// http(s) or carries credentials, a query or a fragment, and a key over
// http:// off this machine's loopback; https://, the proxy's routes, a
// local model and a key-less LAN model are taken.
func TestNewRefuses(t *testing.T) {
	for _, e := range []Endpoint{
		{Format: "gemini", BaseURL: "http://127.0.0.1:1/v1"},
		{Format: FormatOpenAI, BaseURL: "file:///etc/passwd"},
		{Format: FormatOpenAI, BaseURL: "http://user:pw@127.0.0.1:1/v1"},
		{Format: FormatOpenAI, BaseURL: "http://127.0.0.1:1/v1?key=x"},
		{Format: FormatOpenAI, BaseURL: "http://127.0.0.1:1/v1#x"},
		{Format: FormatOpenAI, BaseURL: "127.0.0.1:1/v1"},
		{Format: FormatOpenAI, BaseURL: "http://192.168.1.5:8000/v1", Key: "k"},
		{Format: FormatAnthropic, BaseURL: "http://api.anthropic.com", Key: "k"},
		{Format: FormatOpenAI, BaseURL: "http://127.0.0.1.example.com/v1", Key: "k"},
	} {
		if _, err := New(e); err == nil {
			t.Errorf("New(%+v) was taken", e)
		}
	}
	for _, e := range []Endpoint{
		{Format: FormatAnthropic, BaseURL: "https://api.anthropic.com", Key: "k"},
		{Format: FormatOpenAI, BaseURL: "http://127.0.0.1:20001/_link/s/x/sealed/AGENT_A_MODEL_KEY/v1", Key: "placeholder"},
		{Format: FormatOpenAI, BaseURL: "http://[::1]:11434/v1", Key: "k"},
		{Format: FormatOpenAI, BaseURL: "http://localhost:8080/v1", Key: "k"},
		{Format: FormatOpenAI, BaseURL: "http://192.168.1.5:8000/v1"},
	} {
		if _, err := New(e); err != nil {
			t.Errorf("New(%+v) was refused: %v", e, err)
		}
	}
}

// TestBadResponseWordsBounded: what a bad answer quotes of itself (here
// an event's name of 512 KiB) comes back as one bounded line.
func TestBadResponseWordsBounded(t *testing.T) {
	name := strings.Repeat("n\x1b", 256<<10)
	p := newProvider(t, recorded{200, hdr("text/event-stream"), []byte("event: " + name + "\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n")})
	_, err := mustNew(t, endpointFor(p, FormatAnthropic)).Complete(context.Background(), aRequest(), nil)
	var me *Error
	if !errors.As(err, &me) || me.Kind != KindBadResponse {
		t.Fatalf("got %v", err)
	}
	if len(me.Message) > maxMessage+len("…") || strings.ContainsRune(me.Message, '\x1b') {
		t.Errorf("a message of %d bytes", len(me.Message))
	}
}
