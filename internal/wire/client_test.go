package wire

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestCallRoundTrip(t *testing.T) {
	cl, _ := newTestClient(t, testRoutes(nil, nil))
	var resp echoResp
	if _, err := cl.Call(context.Background(), specEcho, &echoReq{Text: "hi"}, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Text != "hi" {
		t.Fatalf("echo said %q", resp.Text)
	}
}

func TestManyCallsInFlight(t *testing.T) {
	release := make(chan struct{})
	cl, _ := newTestClient(t, testRoutes(nil, release))
	// A blocked call does not hold up the others.
	blocked := make(chan error, 1)
	go func() {
		_, err := cl.Call(context.Background(), specBlock, &empty{}, &empty{})
		blocked <- err
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprint("call-", i)
			var resp echoResp
			if _, err := cl.Call(context.Background(), specEcho, &echoReq{Text: want}, &resp); err != nil {
				errs <- err
			} else if resp.Text != want {
				errs <- fmt.Errorf("call %q got the reply %q", want, resp.Text)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	close(release)
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
}

func TestHandlerErrorIsTypedAndKeepsChannel(t *testing.T) {
	cl, _ := newTestClient(t, testRoutes(nil, nil))
	_, err := cl.Call(context.Background(), specFail, &empty{}, &empty{})
	var we *Error
	if !errors.As(err, &we) || we.Code != "nope" {
		t.Fatalf("got %v, want a wire error with code nope", err)
	}
	if _, err := cl.Call(context.Background(), specEcho, &echoReq{Text: "still"}, &echoResp{}); err != nil {
		t.Fatalf("channel died after a refusal: %v", err)
	}
}

func TestStateAndOnce(t *testing.T) {
	t.Run("open before hello closes", func(t *testing.T) {
		cl, done := newTestClient(t, testRoutes(nil, nil))
		_, err := cl.Call(context.Background(), specOpen, &empty{}, &empty{})
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("got %v, want ErrClosed", err)
		}
		wantViolation(t, done)
	})
	t.Run("hello then open, second hello closes", func(t *testing.T) {
		cl, done := newTestClient(t, testRoutes(nil, nil))
		f, err := os.Open("/dev/null")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := cl.Call(context.Background(), specHello, &helloReq{Names: []string{"n"}}, &empty{}, f); err != nil {
			t.Fatal(err)
		}
		files, err := cl.Call(context.Background(), specOpen, &empty{}, &empty{})
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 1 {
			t.Fatalf("open returned %d fds", len(files))
		}
		flags, err := unix.FcntlInt(files[0].Fd(), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC == 0 {
			t.Fatalf("received fd is not close-on-exec (flags %#x, %v)", flags, err)
		}
		CloseFiles(files)
		_, err = cl.Call(context.Background(), specHello, &helloReq{Names: []string{"n"}}, &empty{}, f)
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("second hello: got %v, want ErrClosed", err)
		}
		wantViolation(t, done)
	})
}

func TestContextCancelThenChannelStillWorks(t *testing.T) {
	got := make(chan struct{}, 1)
	release := make(chan struct{})
	cl, _ := newTestClient(t, testRoutes(got, release))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cl.Call(ctx, specBlock, &empty{}, &empty{})
		errc <- err
	}()
	<-got
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	close(release) // the late reply is dropped, not taken for a violation
	if _, err := cl.Call(context.Background(), specEcho, &echoReq{Text: "after"}, &echoResp{}); err != nil {
		t.Fatalf("channel died after a cancelled call: %v", err)
	}
}

func TestPeerGoneFailsEveryWaiter(t *testing.T) {
	got := make(chan struct{}, 8)
	a, b := socketpair(t)
	srv, err := NewServer(b, testRoutes(got, nil), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	cl, err := NewClient(a)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	errc := make(chan error, 4)
	for i := 0; i < 4; i++ {
		go func() {
			_, err := cl.Call(context.Background(), specBlock, &empty{}, &empty{})
			errc <- err
		}()
	}
	for i := 0; i < 4; i++ {
		<-got
	}
	srv.Close() // the handlers see their ctx end; the peer sees the channel go
	<-served
	for i := 0; i < 4; i++ {
		if err := <-errc; err != nil && !errors.Is(err, ErrClosed) {
			t.Fatalf("waiter got %v, want nil or ErrClosed", err)
		}
	}
	<-cl.Done()
	if _, err := cl.Call(context.Background(), specEcho, &echoReq{}, &echoResp{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("call on a dead channel: got %v, want ErrClosed", err)
	}
}

func TestClientCloseWithNothingInFlight(t *testing.T) {
	a, b := socketpair(t)
	defer b.Close()
	cl, err := NewClient(a)
	if err != nil {
		t.Fatal(err)
	}
	cl.Close() // returns: shutdown wakes the blocked reader
	if !errors.Is(cl.Err(), ErrClosed) {
		t.Fatalf("Err after Close: %v", cl.Err())
	}
}

func TestNotSeqpacketRefused(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	if _, err := NewClient(os.NewFile(uintptr(fds[0]), "s")); err == nil {
		t.Fatal("a SOCK_STREAM channel was accepted")
	}
}

// With no call in flight nobody reads the channel, yet a peer that goes
// closes Done (the watcher sees it) and the next call fails at once.
func TestPeerGoneWithNothingInFlight(t *testing.T) {
	a, b := socketpair(t)
	cl, err := NewClient(a)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	b.Close()
	select {
	case <-cl.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("Done not closed 30 s after the peer went")
	}
	if _, err := cl.Call(context.Background(), specEcho, &echoReq{}, &echoResp{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("call on a dead channel: got %v, want ErrClosed", err)
	}
}

// A call whose context can end reads as the others do (in poll, beside
// the eventfd): many such callers at once all get their own replies, and
// the one whose context ends while it holds the reader's turn gives the
// turn up to the others.
func TestCancellableCallersShareTheReader(t *testing.T) {
	got := make(chan struct{}, 1)
	release := make(chan struct{})
	cl, _ := newTestClient(t, testRoutes(got, release))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cl.Call(ctx, specBlock, &empty{}, &empty{})
		errc <- err
	}()
	<-got // it holds the reader's turn, or will: no reply comes until release
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer ccancel()
			want := fmt.Sprint("c-", i)
			var resp echoResp
			if _, err := cl.Call(cctx, specEcho, &echoReq{Text: want}, &resp); err != nil {
				errs <- err
			} else if resp.Text != want {
				errs <- fmt.Errorf("call %q got %q", want, resp.Text)
			}
		}()
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	close(release)
	if _, err := cl.Call(context.Background(), specEcho, &echoReq{Text: "after"}, &echoResp{}); err != nil {
		t.Fatalf("channel died: %v", err)
	}
}
