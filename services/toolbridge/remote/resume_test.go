package remote

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const call7 = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`

const answer7 = `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`

const progress = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`

// sseServer is a streamable-HTTP server on loopback whose POST answers
// with post (an event stream) and whose GET with Last-Event-ID answers
// with get(n, lastID) for the n-th resumption; a notification is
// accepted (202). It records each Last-Event-ID it was sent.
type sseServer struct {
	*httptest.Server
	mu    sync.Mutex
	gets  []string
	first chan struct{} // closed at the first GET
	once  sync.Once
}

func newSSEServer(t *testing.T, post string, get func(n int, lastID string) string) *sseServer {
	s := &sseServer{first: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == http.MethodPost && !strings.Contains(string(b), `"id"`):
			w.WriteHeader(http.StatusAccepted)
			return
		case r.Method == http.MethodDelete:
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if r.Method == http.MethodPost {
			io.WriteString(w, post)
			return
		}
		s.mu.Lock()
		s.gets = append(s.gets, r.Header.Get("Last-Event-ID"))
		n := len(s.gets)
		s.mu.Unlock()
		s.once.Do(func() { close(s.first) })
		io.WriteString(w, get(n, r.Header.Get("Last-Event-ID")))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sseServer) resumes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.gets...)
}

// freshIDs is a resumption that brings a new event id each time, and
// never the answer.
func freshIDs(n int, _ string) string {
	return fmt.Sprintf("id: e-%d\nretry: 1\ndata: %s\n\n", n+1, progress)
}

// runCall sends call7 on a client of s (callTime its CallTime), then
// what more writes, and gives what Run wrote, failing the test where Run
// is still at it after 20 s.
func runCall(t *testing.T, s *sseServer, callTime time.Duration, more func(w io.Writer)) string {
	t.Helper()
	c, err := FromEnv(s.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.CallTime = callTime
	pr, pw := io.Pipe()
	var out strings.Builder
	var outMu sync.Mutex
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background(), pr, &lockedWriter{&outMu, &out}) }()
	io.WriteString(pw, call7+"\n")
	if more != nil {
		more(pw)
	}
	pw.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the call is still resuming after 20 s (%d resumptions)", len(s.resumes()))
	}
	outMu.Lock()
	defer outMu.Unlock()
	return out.String()
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// lastLine is out's last line, which must be an error answer to id 7
// saying want.
func wantErrorAnswer(t *testing.T, out, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, `{"jsonrpc":"2.0","id":7,"error"`) || !strings.Contains(last, want) {
		t.Fatalf("the last line %q is no error answer saying %q", last, want)
	}
}

// TestResumeBoundedInAll: a server that brings a fresh event id at each
// resumption, and never the answer, is resumed maxResumesInAll times and
// the call answered with an error saying so (before, it was resumed for
// ever). The control: a server that answers at the third resumption has
// its answer passed on.
func TestResumeBoundedInAll(t *testing.T) {
	post := "id: e-1\nretry: 1\ndata: " + progress + "\n\n"
	s := newSSEServer(t, post, freshIDs)
	out := runCall(t, s, 0, nil)
	wantErrorAnswer(t, out, fmt.Sprintf("resumed %d times", maxResumesInAll))
	if n := len(s.resumes()); n != maxResumesInAll {
		t.Fatalf("resumed %d times, want %d", n, maxResumesInAll)
	}
	ok := newSSEServer(t, post, func(n int, last string) string {
		if n == 3 {
			return "id: e-9\ndata: " + answer7 + "\n\n"
		}
		return freshIDs(n, last)
	})
	if out := runCall(t, ok, 0, nil); !strings.HasSuffix(out, answer7+"\n") {
		t.Fatalf("the control: %q", out)
	}
}

// TestResumeBoundedByCallTime: resumptions stop when the call's time is
// over, the call answered with an error saying so.
func TestResumeBoundedByCallTime(t *testing.T) {
	post := "id: e-1\nretry: 200\ndata: " + progress + "\n\n"
	s := newSSEServer(t, post, func(n int, _ string) string {
		return fmt.Sprintf("id: e-%d\nretry: 200\ndata: %s\n\n", n+1, progress)
	})
	out := runCall(t, s, 700*time.Millisecond, nil)
	wantErrorAnswer(t, out, "the call took longer than 700ms")
	if n := len(s.resumes()); n >= maxResumesInAll {
		t.Fatalf("resumed %d times: the call's time did not stop it", n)
	}
}

// TestResumeStopsOnCancel: a notifications/cancelled of the call stops
// its resumptions, the call answered with an error saying it was
// cancelled; a cancel naming another request stops nothing (the
// control: the call goes on resuming).
func TestResumeStopsOnCancel(t *testing.T) {
	post := "id: e-1\nretry: 50\ndata: " + progress + "\n\n"
	get := func(n int, _ string) string {
		return fmt.Sprintf("id: e-%d\nretry: 50\ndata: %s\n\n", n+1, progress)
	}
	s := newSSEServer(t, post, get)
	out := runCall(t, s, time.Minute, func(w io.Writer) {
		<-s.first
		io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`+"\n")
		time.Sleep(300 * time.Millisecond)
		if n := len(s.resumes()); n < 2 {
			t.Errorf("a cancel of another request stopped the call: %d resumptions", n)
		}
		io.WriteString(w, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`+"\n")
	})
	wantErrorAnswer(t, out, "the call was cancelled")
	if n := len(s.resumes()); n >= maxResumesInAll {
		t.Fatalf("resumed %d times after its cancel", n)
	}
}

// TestEventCapIsPerMessage: two events of 5 MB each and then the answer,
// 10 MB in one stream, all come through (before, the 8 MB cap cut the
// stream as a whole, passing on a cut message); one event of 9 MB, in
// data lines of 1 MB, is refused.
func TestEventCapIsPerMessage(t *testing.T) {
	big := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("a", 5<<20) + `"}}`
	s := newSSEServer(t, "data: "+big+"\n\ndata: "+big+"\n\ndata: "+answer7+"\n\n", freshIDs)
	out := runCall(t, s, 0, nil)
	if out != big+"\n"+big+"\n"+answer7+"\n" {
		t.Fatalf("10 MB in 5 MB events came as %d bytes, ending %q", len(out), out[max(0, len(out)-80):])
	}
	line := "data: " + strings.Repeat("b", 1<<20) + "\n"
	s = newSSEServer(t, strings.Repeat(line, 9)+"\n", freshIDs)
	wantErrorAnswer(t, runCall(t, s, 0, nil), "an event over 8 MB")
	if n := len(s.resumes()); n != 0 {
		t.Fatalf("resumed %d times after an event over the cap", n)
	}
}

// TestUnfinishedEventIsDropped: an event the stream ends inside (no blank
// line after it) is dropped, its id too, as the SSE spec says: the
// resumption is from the last whole event's id, and the answer the server
// then sends whole is passed on once. Before, the unfinished event was
// passed on as a line.
func TestUnfinishedEventIsDropped(t *testing.T) {
	post := "id: e-1\nretry: 1\ndata: " + progress + "\n\nid: e-2\ndata: " + strings.TrimSuffix(answer7, "}")
	s := newSSEServer(t, post, func(int, string) string { return "id: e-3\ndata: " + answer7 + "\n\n" })
	out := runCall(t, s, 0, nil)
	if out != progress+"\n"+answer7+"\n" {
		t.Fatalf("written %q", out)
	}
	if got := s.resumes(); len(got) != 1 || got[0] != "e-1" {
		t.Fatalf("resumed from %q, want once from e-1", got)
	}
}
