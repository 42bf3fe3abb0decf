package askbroker

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/wire"
)

// serveBroker serves b on one end of a real SOCK_SEQPACKET pair and
// returns a Remote on the other.
func serveBroker(t *testing.T, b *Broker) *Remote {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Serve(ctx, os.NewFile(uintptr(fds[1]), "broker"), func(string, ...any) {})
	}()
	cl, err := wire.NewClient(os.NewFile(uintptr(fds[0]), "caller"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close(); cancel(); <-done })
	return &Remote{C: cl}
}

// A question nobody answers in time is refused saying it timed out and
// naming its --allow, in process and through the channel alike.
func TestUnansweredSaysItTimedOut(t *testing.T) {
	s, _ := testStore(t)
	release, err := s.Answering() // someone answers there, so it waits
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	b, err := New(Config{Store: s, Wait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for name, ask := range map[string]func(*Question) (Decision, error){
		"in process":       func(q *Question) (Decision, error) { return b.Ask(ctx, q) },
		"over the channel": func(q *Question) (Decision, error) { return serveBroker(t, b).Ask(ctx, q) },
	} {
		q := sampleQuestion()
		d, err := ask(q)
		if err != nil || d.Allow || d.By != "timeout" || !strings.Contains(d.Reason, "timed out") || !strings.Contains(d.Reason, q.Allow) {
			t.Errorf("%s: %+v, %v; want timed out naming %q", name, d, err, q.Allow)
		}
	}
}

// A question's ref must be an id's form and asked once at a time.
func TestAQuestionsRefIsChecked(t *testing.T) {
	s, _ := testStore(t)
	release, err := s.Answering()
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	b, err := New(Config{Store: s, Wait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r := serveBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q := sampleQuestion()
	req := &AskRequest{What: q.What, Sandbox: q.Sandbox, Agent: q.Agent, Call: q.Call, Allow: q.Allow, Ref: "../not-an-id"}
	var rep Reply
	if _, err := r.C.Call(ctx, AskSpec, req, &rep); err == nil || !strings.Contains(err.Error(), "bad ref") {
		t.Fatalf("a bad ref: %+v, %v; want refused", rep, err)
	}
	// The same ref twice at once: the second is refused, the first still
	// asked (withdrawn by that ref, it ends).
	req.Ref = newID()
	first := make(chan Reply, 1)
	go func() {
		var rep Reply
		r.C.Call(ctx, AskSpec, req, &rep)
		first <- rep
	}()
	for {
		if ws, _ := s.List(); len(ws) == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := r.C.Call(ctx, AskSpec, req, &rep); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("a ref asked twice: %+v, %v; want refused", rep, err)
	}
	var e Empty
	if _, err := r.C.Call(ctx, WithdrawAskSpec, &WithdrawRef{Ref: req.Ref}, &e); err != nil {
		t.Fatal(err)
	}
	if got := <-first; got.Allow || got.By != "withdrawn" {
		t.Fatalf("the question withdrawn by its ref: %+v", got)
	}
}
