package wire

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

var (
	specHoldInline = Spec{Type: 10, Name: "hold-inline", Flags: Inline, States: AnyState}
	specInFlight   = Spec{Type: 11, Name: "in-flight", States: AnyState}
)

// drainRoutes: echo; hold-inline keeps the reader itself busy until
// holdGo is closed, so records sent meanwhile wait unread; in-flight runs
// on its own goroutine until inGo is closed, and fails if its context
// ended first (a drain must let it finish, not cancel it).
func drainRoutes(holdGot, inGot chan<- struct{}, holdGo, inGo <-chan struct{}) map[Type]*Route {
	wait := func(ctx context.Context, got chan<- struct{}, release <-chan struct{}) (*empty, []*os.File, error) {
		got <- struct{}{}
		select {
		case <-release:
			return &empty{}, nil, nil
		case <-ctx.Done():
			return nil, nil, Errorf("cancelled", "the handler's context ended")
		}
	}
	return Table(
		Handle(specEcho, func(ctx context.Context, r *Request, q *echoReq) (*echoResp, []*os.File, error) {
			return &echoResp{Text: q.Text}, nil, nil
		}),
		Handle(specHoldInline, func(ctx context.Context, r *Request, q *empty) (*empty, []*os.File, error) {
			return wait(ctx, holdGot, holdGo)
		}),
		Handle(specInFlight, func(ctx context.Context, r *Request, q *empty) (*empty, []*os.File, error) {
			return wait(ctx, inGot, inGo)
		}),
	)
}

// startServer serves one end of a socketpair; it returns the server, the
// other end and Serve's result.
func startServer(t *testing.T, routes map[Type]*Route) (*Server, *os.File, <-chan error) {
	t.Helper()
	a, b := socketpair(t)
	t.Cleanup(func() { a.Close() })
	srv, err := NewServer(b, routes, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background()) }()
	return srv, a, done
}

// TestDrainAnswersInFlightAndRefusesUnread: after Drain, a request in
// flight finishes and its answer is written; a request the peer sent
// before but the server had not read yet is answered with the drain's
// answer, never served; the peer can send nothing more; Serve returns
// only once the request in flight has been answered.
func TestDrainAnswersInFlightAndRefusesUnread(t *testing.T) {
	holdGot, inGot := make(chan struct{}, 1), make(chan struct{}, 1)
	holdGo, inGo := make(chan struct{}), make(chan struct{})
	srv, peer, done := startServer(t, drainRoutes(holdGot, inGot, holdGo, inGo))

	sendRaw(t, peer, rawRequest(t, specInFlight.Type, 1, `{}`, 0))
	<-inGot // in flight on its own goroutine
	sendRaw(t, peer, rawRequest(t, specHoldInline.Type, 2, `{}`, 0))
	<-holdGot // the reader is busy: what comes next waits unread
	sendRaw(t, peer, rawRequest(t, specEcho.Type, 3, `{"text":"late"}`, 0))

	srv.Drain(Errorf("stopping", "the server is stopping"), nil)
	if err := unix.Sendmsg(int(peer.Fd()), rawRequest(t, specEcho.Type, 4, `{"text":"after"}`, 0), nil, nil, unix.MSG_NOSIGNAL); err == nil {
		t.Fatal("the peer could still send after Drain")
	}
	close(holdGo)

	got := map[uint64]Record{}
	for len(got) < 2 {
		r, files, err := ReadRecord(int(peer.Fd()))
		if err != nil {
			t.Fatalf("reading the answers: %v (have %v)", err, got)
		}
		CloseFiles(files)
		got[r.ID] = r
	}
	if r := got[2]; r.Kind != KindReply {
		t.Fatalf("the request the reader held (before Drain, already read) got kind %d %s, want its answer", r.Kind, r.Body)
	}
	var we Error
	if r := got[3]; r.Kind != KindError || Unmarshal(r.Body, &we) != nil || we.Code != "stopping" {
		t.Fatalf("the request sent before Drain but unread got kind %d %s, want the drain's answer", r.Kind, r.Body)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned (%v) with a request still in flight", err)
	default:
	}

	close(inGo)
	r, files, err := ReadRecord(int(peer.Fd()))
	if err != nil {
		t.Fatalf("the request in flight got no answer: %v", err)
	}
	CloseFiles(files)
	if r.ID != 1 || r.Kind != KindReply {
		t.Fatalf("the request in flight got id %d kind %d %s, want its answer", r.ID, r.Kind, r.Body)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("Serve returned %v, want the channel closed", err)
	}
}

// TestDrainBoundEndsHandlers: past the drain's bound, a handler that
// would never return by itself has its context ended and Serve returns
// (a drain that ignored its bound would hang here); before the bound the
// same handler is left to run (the test above shows it finish).
func TestDrainBoundEndsHandlers(t *testing.T) {
	inGot := make(chan struct{}, 1)
	never := make(chan struct{})
	srv, peer, done := startServer(t, drainRoutes(nil, inGot, nil, never))

	sendRaw(t, peer, rawRequest(t, specInFlight.Type, 1, `{}`, 0))
	<-inGot
	bound := make(chan struct{})
	srv.Drain(Errorf("stopping", "the server is stopping"), bound)
	// Before the bound, nothing ends the handler: Serve waits.
	select {
	case err := <-done:
		t.Fatalf("Serve returned (%v) before the bound, with a request in flight", err)
	default:
	}
	close(bound)
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("Serve returned %v, want the channel closed", err)
	}
}

// TestAfterRunsOnceTheReplyIsWritten: a handler's After hook runs after
// its reply is on the socket (the kernel's stop request stops only then).
func TestAfterRunsOnceTheReplyIsWritten(t *testing.T) {
	ran := make(chan bool, 1)
	var peerFD atomic.Int64 // set once the server runs; read by its handler
	routes := Table(Handle(specEcho, func(ctx context.Context, r *Request, q *echoReq) (*echoResp, []*os.File, error) {
		r.After(func() {
			// The reply is already readable on the peer's end.
			n, _, err := unix.Recvfrom(int(peerFD.Load()), make([]byte, 1), unix.MSG_PEEK|unix.MSG_DONTWAIT)
			ran <- err == nil && n > 0
		})
		return &echoResp{Text: q.Text}, nil, nil
	}))
	_, peer, _ := startServer(t, routes)
	peerFD.Store(int64(peer.Fd()))
	sendRaw(t, peer, rawRequest(t, specEcho.Type, 1, `{"text":"a"}`, 0))
	if !<-ran {
		t.Fatal("After ran before the reply was written")
	}
}
