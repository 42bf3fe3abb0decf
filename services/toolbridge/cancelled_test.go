package toolbridge

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
)

// reply is one request's answer, taken on a goroutine of its own.
type reply struct {
	status int
	body   string
	err    error
}

// send posts body in session sid on a connection of its own and returns
// where its answer comes.
func (r *rig) send(sid, body string) <-chan reply {
	out := make(chan reply, 1)
	go func() {
		c, err := net.Dial("unix", r.sock)
		if err != nil {
			out <- reply{err: err}
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		req, _ := http.NewRequest("POST", "http://127.0.0.1/mcp/test", strings.NewReader(body))
		req.Header.Set(SessionHeader, sid)
		req.Write(c)
		resp, err := http.ReadResponse(bufio.NewReader(c), req)
		if err != nil {
			out <- reply{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		out <- reply{status: resp.StatusCode, body: string(b)}
	}()
	return out
}

func waitCall(id, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"wait","arguments":{"text":%q}}}`, id, text)
}

func cancelOf(requestID string) string {
	return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + requestID + `,"reason":"t"}}`
}

// marks is what the server's wait tool wrote of the call named text.
func marks(dir, text string) string {
	b, _ := os.ReadFile(filepath.Join(dir, text))
	return string(b)
}

func (r *rig) cancel(sid, requestID string) {
	r.t.Helper()
	if st, _, body := r.post("test", sid, cancelOf(requestID)); st != http.StatusAccepted {
		r.t.Fatalf("notifications/cancelled %s: %d %s", requestID, st, body)
	}
}

// A client's notifications/cancelled names its own id; the server knows
// the request by the bridge's. The bridge sends it with the bridge's id
// for that session's request in flight, so the call the client meant is
// the one cancelled, and drops one naming none: here the client's ids
// are chosen to be the bridge's ids of its other calls, which a
// requestId passed as it is would cancel instead.
func TestCancelledCancelsTheCallItNames(t *testing.T) {
	waits := t.TempDir()
	record := filepath.Join(t.TempDir(), "record")
	r := newRig(t, askNone, Settings{}, "LNK_TEST_WAITS="+waits, "LNK_TEST_RECORD="+record)
	sid := r.initSession() // the bridge's id 1 is initialize's
	started := func(text string) {
		t.Helper()
		waitFor(t, "the call "+text+" to start", func() bool { return strings.Contains(marks(waits, text), "started") })
	}
	a := r.send(sid, waitCall("3", "a")) // the bridge's id 2
	started("a")
	b := r.send(sid, waitCall("2", "b")) // the bridge's id 3
	started("b")

	r.cancel(sid, "3") // the client's a
	select {
	case got := <-a:
		if got.err != nil || got.status != 200 || !strings.Contains(got.body, `"id":3`) || !strings.Contains(got.body, "cancelled by the client") {
			t.Fatalf("the cancelled call's answer: %+v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call a was never answered")
	}
	waitFor(t, "the server to cancel a", func() bool { return strings.Contains(marks(waits, "a"), "cancelled") })
	time.Sleep(200 * time.Millisecond)
	if m := marks(waits, "b"); strings.Contains(m, "cancelled") {
		t.Fatalf("cancelling the client's id 3 cancelled b, the bridge's id 3: %q", m)
	}

	// A requestId of no request in flight is dropped: 4 is the bridge's id
	// of the client's "x", which the client never named so.
	x := r.send(sid, waitCall(`"x"`, "x")) // the bridge's id 4
	started("x")
	r.cancel(sid, "4")
	r.cancel(sid, "99")
	time.Sleep(200 * time.Millisecond)
	if m := marks(waits, "x"); strings.Contains(m, "cancelled") {
		t.Fatalf("a requestId naming no request of the client's cancelled x: %q", m)
	}
	rec, _ := os.ReadFile(record)
	if strings.Contains(string(rec), `"requestId":99`) || strings.Contains(string(rec), `"requestId":4`) {
		t.Fatalf("a requestId naming no request in flight reached the server: %s", rec)
	}

	r.cancel(sid, `"x"`)
	r.cancel(sid, "2")
	for name, ch := range map[string]<-chan reply{"x": x, "b": b} {
		select {
		case got := <-ch:
			if !strings.Contains(got.body, "cancelled by the client") {
				t.Errorf("the cancelled call %s's answer: %+v", name, got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the cancelled call %s was never answered", name)
		}
		waitFor(t, "the server to cancel "+name, func() bool { return strings.Contains(marks(waits, name), "cancelled") })
	}
	// The session goes on.
	if st, body := r.call(sid, "echo", "after"); st != 200 || !strings.Contains(body, "after") {
		t.Errorf("the session after its calls were cancelled: %d %s", st, body)
	}
}

// A requestId is read one way: written twice, or in another case (which
// encoding/json reads as the same member and the go-sdk does not), it
// names nothing and the notification is dropped; an id spelled with an
// escape names the request the client sent without one.
func TestCancelledRequestIDIsReadOneWay(t *testing.T) {
	for _, c := range []struct {
		params string
		sent   bool
	}{
		{`{"requestId":"x"}`, true},
		{`{"requestId":"\u0078","reason":"r"}`, true},
		{`{"requestId":"x","requestId":"y"}`, false},
		{`{"requestId":"y","requestId":"x"}`, false},
		{`{"RequestId":"x"}`, false},
		{`{"requestId":"x","requestID":"x"}`, false},
		{`{"requestId":"y"}`, false},
		{`{"requestId":7}`, false},
		{`{}`, false},
		{`[1]`, false},
	} {
		var out strings.Builder
		s := &server{stdin: nopWriteCloser{&out}, waiting: map[uint64]chan answer{7: make(chan answer, 1), 9: make(chan answer, 1)}, inFlight: map[string]uint64{idKey([]byte(`"x"`)): 9}}
		sent, err := s.cancelled(&message{Method: "notifications/cancelled", Params: []byte(c.params)})
		if err != nil || sent != c.sent {
			t.Errorf("%s: sent %v %v, want %v", c.params, sent, err, c.sent)
		}
		switch {
		case c.sent && !strings.Contains(out.String(), `"requestId":9`):
			t.Errorf("%s: sent %q, want the bridge's id 9", c.params, out.String())
		case !c.sent && out.Len() > 0:
			t.Errorf("%s: dropped, yet sent %q", c.params, out.String())
		}
	}
}

// heldAsker holds each question until released, then says yes, even to
// a question withdrawn meanwhile: the worst an owner's late yes can do.
type heldAsker struct {
	asked, release chan struct{}
}

func (a *heldAsker) Ask(ctx context.Context, q Question) (bool, error) {
	a.asked <- struct{}{}
	<-a.release
	return true, nil
}

// A call cancelled while its owner is being asked is withdrawn: it is
// answered as cancelled, and never reaches the server, whatever the
// owner says after.
func TestCancelledWhileItsOwnerIsAskedNeverRuns(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record")
	r := newRig(t, map[string]caps.Tool{"test": {}}, Settings{}, "LNK_TEST_RECORD="+record)
	asker := &heldAsker{asked: make(chan struct{}, 1), release: make(chan struct{})}
	r.bridge.Asker = asker
	sid := r.initSession()
	call := r.send(sid, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"must-not-run"}}}`)
	select {
	case <-asker.asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the owner was never asked")
	}
	r.cancel(sid, "9")
	close(asker.release)
	select {
	case got := <-call:
		if got.err != nil || !strings.Contains(got.body, `"id":9`) || !strings.Contains(got.body, "cancelled by the client") {
			t.Fatalf("the call cancelled while asked: %+v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call cancelled while asked was never answered")
	}
	time.Sleep(100 * time.Millisecond)
	if rec, _ := os.ReadFile(record); strings.Contains(string(rec), "must-not-run") {
		t.Fatalf("the cancelled call reached the server: %s", rec)
	}
}
