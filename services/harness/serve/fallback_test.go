package serve

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/services/harness/config"
	"lnk.dev/lnk/services/harness/endpoint"
)

// replay is a provider on loopback answering every request with one
// answer recorded in the provider's documented format
// (copied from services/harness/model/testdata/recorded), counting the requests.
type replay struct {
	mu    sync.Mutex
	asked int
}

func (r *replay) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked
}

// serveRecorded serves name's recorded answer on l until the test ends.
func serveRecorded(t *testing.T, l net.Listener, name string) *replay {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := &replay{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		r.mu.Lock()
		r.asked++
		r.mu.Unlock()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return r
}

// fakeClock is the fallback's clock, moved by the test.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestFallbackFromConfig: an agent whose config.json names a local model
// (OpenAI-compatible, on a loopback port nothing listens on) and a
// fallback (Anthropic's messages): a turn while the local model is off
// is answered by the fallback, said once in the log; the local model,
// started meanwhile, is skipped for 3 minutes (still at 2:59 on the
// fake clock), and asked again past them. Both providers answer in
// their recorded formats.
func TestFallbackFromConfig(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	localAddr := l.Addr().String()
	l.Close() // off: nothing listens there
	fl, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hosted := serveRecorded(t, fl, "anthropic_stream_text.http")
	c := &config.Config{AgentID: strings.Repeat("d4", 16), Owner: "ana", Name: "main", Key: config.NewKey(), Port: 20000, AgentDir: agentDir(t, "words"),
		Model:    config.Model{Format: "openai", BaseURL: "http://" + localAddr + "/v1", Model: "llama3.1:8b", Key: "link-placeholder"},
		Fallback: &config.Model{Format: "anthropic", BaseURL: "http://" + fl.Addr().String() + "/v1", Model: "claude-sonnet-4-5", Key: "link-placeholder"}}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)}
	var mu sync.Mutex
	var logged []string
	a, err := Open(c, Options{Now: clock.Now, Logf: func(f string, args ...any) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(f, args...))
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	turn := func() string {
		t.Helper()
		var out strings.Builder
		if _, err := a.Turn(context.Background(), endpoint.Message{Thread: "main", Text: "hello"}, func(s string) { out.WriteString(s) }); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := turn(); got != "Your note is in work/todo.md." || hosted.count() != 1 {
		t.Fatalf("with the local model off: answered %q, the fallback asked %d times", got, hosted.count())
	}
	mu.Lock()
	said := strings.Join(logged, "\n")
	mu.Unlock()
	if strings.Count(said, "the local model is off") != 1 || !strings.Contains(said, "skipped for 3m0s") {
		t.Errorf("the log says:\n%s\nwant the fallback taken once, saying why and for how long", said)
	}
	ll, err := net.Listen("tcp4", localAddr)
	if err != nil {
		t.Fatalf("the local model's port was taken meanwhile: %v", err)
	}
	local := serveRecorded(t, ll, "ollama_stream_text.http")
	clock.advance(3*time.Minute - time.Second)
	if got := turn(); got != "Your note is in work/todo.md." || local.count() != 0 || hosted.count() != 2 {
		t.Fatalf("at 2:59: answered %q; local asked %d, fallback %d; want the fallback alone", got, local.count(), hosted.count())
	}
	clock.advance(2 * time.Second)
	if got := turn(); got != "Hello there." || local.count() != 1 || hosted.count() != 2 {
		t.Fatalf("past 3:00: answered %q; local asked %d, fallback %d; want the local model again", got, local.count(), hosted.count())
	}
}
