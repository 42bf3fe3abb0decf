package model

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// recorded is one provider's answer as its API reference documents it,
// kept in testdata/recorded as an HTTP/1.1 response: status line,
// headers, a blank line and the body.
type recorded struct {
	Status int
	Header http.Header
	Body   []byte
}

func loadRecorded(t testing.TB, name string) recorded {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	return parseRecorded(t, raw)
}

func parseRecorded(t testing.TB, raw []byte) recorded {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatalf("recorded answer: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("recorded answer's body: %v", err)
	}
	return recorded{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// seen is what a test server was sent.
type seen struct {
	Method, Path string
	Header       http.Header
	Body         []byte
	URL          string
}

// provider is a local test server answering each request with the next
// of its answers (the last again when they run out), recording what it
// was sent. A stream's body is written an event at a time, flushed.
type provider struct {
	*httptest.Server
	mu      sync.Mutex
	answers []recorded
	got     []seen
	hold    chan struct{} // closed to let a held answer end
	holdAt  int           // hold after this many bytes of the body; -1 never
}

func newProvider(t testing.TB, answers ...recorded) *provider {
	p := &provider{answers: answers, hold: make(chan struct{}), holdAt: -1}
	p.Server = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() {
		p.release()
		p.Close()
	})
	return p
}

func (p *provider) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.hold:
	default:
		close(p.hold)
	}
}

func (p *provider) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.got = append(p.got, seen{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, URL: r.URL.String()})
	a := p.answers[min(len(p.got)-1, len(p.answers)-1)]
	holdAt := p.holdAt
	p.mu.Unlock()
	for k, v := range a.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(a.Status)
	fl, _ := w.(http.Flusher)
	rest := a.Body
	written := 0
	for len(rest) > 0 {
		n := bytes.Index(rest, []byte("\n\n"))
		if n < 0 {
			n = len(rest)
		} else {
			n += 2
		}
		if holdAt >= 0 && written+n > holdAt {
			n = holdAt - written
		}
		w.Write(rest[:n])
		written += n
		rest = rest[n:]
		if fl != nil {
			fl.Flush()
		}
		if holdAt >= 0 && written == holdAt {
			select {
			case <-p.hold:
			case <-r.Context().Done():
			}
			holdAt = -1
		}
	}
}

func (p *provider) requests() []seen {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]seen(nil), p.got...)
}

// testKey is the key the tests' endpoints hold.
const testKey = "sk-test-Kq93xVb2LmP0wZ7aHn4Rt"

func endpointFor(p *provider, format string) Endpoint {
	base := p.URL + "/v1"
	if format == FormatAnthropic {
		base = p.URL
	}
	return Endpoint{Format: format, BaseURL: base, Key: testKey, Model: "test-model", HTTPClient: p.Client()}
}

func mustNew(t testing.TB, e Endpoint) *client {
	t.Helper()
	c, err := New(e)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*client)
}

// aRequest is a conversation with a system prompt, a tool offered, an
// earlier call and its answer.
func aRequest() Request {
	return Request{
		System: "You are Link's agent.",
		Messages: []Message{
			{Role: User, Text: "list the work folder"},
			{Role: Assistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "run__command", Arguments: []byte(`{"argv":["ls","work"]}`)}}},
			{Role: ToolRole, ToolCallID: "call_1", ToolName: "run__command", Text: "a.txt\nb.md"},
			{Role: User, Text: "and read todo.md"},
		},
		Tools: []Tool{{Name: "run__command", Description: "Runs a command.", Schema: []byte(`{"type":"object","properties":{"argv":{"type":"array","items":{"type":"string"}}}}`)}},
	}
}

// fakeClock is a clock the test moves: its timers fire only when the
// test says.
type fakeClock struct {
	mu     sync.Mutex
	t      time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c       *fakeClock
	d       time.Duration
	f       func()
	stopped bool
	resets  int
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func (c *fakeClock) clock() clock {
	return clock{now: c.Now, afterFunc: func(d time.Duration, f func()) timer {
		c.mu.Lock()
		defer c.mu.Unlock()
		ft := &fakeTimer{c: c, d: d, f: f}
		c.timers = append(c.timers, ft)
		return ft
	}}
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.d, t.resets = d, t.resets+1
	return !t.stopped
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// waitTimer waits for the clock's n-th timer (a request under way) and
// gives it.
func (c *fakeClock) waitTimer(t testing.TB, n int) *fakeTimer {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		if len(c.timers) >= n {
			ft := c.timers[n-1]
			c.mu.Unlock()
			return ft
		}
		c.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no request started its silence timer")
	return nil
}

// fire runs the timer's function as its expiry would.
func (t *fakeTimer) fire() { t.f() }
