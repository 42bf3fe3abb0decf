package kernel_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// SIGTERM: no new connection; a request already taken finishes and its
// answer is written before the connection closes; the socket goes. Every
// step waits on an event (a byte, an audit line, the exit), never a time.
func TestSigtermFinishesInFlightAndRemovesTheSocket(t *testing.T) {
	home := testenv.Home(t)
	kp := startKernel(t, home)
	c := connect(t, home)

	// The hold request carries one end of a socketpair: the kernel writes
	// a byte on it once the request is in flight, and answers once the
	// test closes its end.
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "ours"), os.NewFile(uintptr(pair[1]), "theirs")
	defer ours.Close()
	answered := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx(t), proto.Hold, &proto.Empty{}, &proto.Empty{}, theirs)
		answered <- err
	}()
	var b [1]byte
	if _, err := ours.Read(b[:]); err != nil {
		t.Fatalf("the hold request never started: %v", err)
	}
	theirs.Close()

	if err := kp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitAudit(t, home, "kernel stopping", func(e audit.Entry) bool {
		return e.Kind == audit.KindKernel && strings.HasPrefix(e.Reason, "kernel stopping")
	})
	// Draining: a new request on the open connection is answered
	// "stopping" or finds the connection shut for it, never served. It
	// runs beside the held request, so nothing here waits on the other.
	late := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx(t), proto.Ping, &proto.Empty{}, &proto.Empty{})
		late <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("the held request was answered before it was released: %v", err)
	default:
	}
	ours.Close() // release: the in-flight request may finish now
	if err := <-answered; err != nil {
		t.Fatalf("the in-flight request got %v, not its answer", err)
	}
	if err := <-late; err == nil {
		t.Fatal("a request after SIGTERM was served")
	} else {
		var we *wire.Error
		if !(errors.As(err, &we) && we.Code == proto.CodeStopping) && !errors.Is(err, wire.ErrClosed) {
			t.Fatalf("a request after SIGTERM: %v", err)
		}
	}
	kp.wait(t)
	if kp.err != nil {
		t.Fatalf("the kernel exited with %v", kp.err)
	}
	if _, err := os.Lstat(filepath.Join(home, ".lnk", "run", "kernel.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the socket is still there: %v", err)
	}
	waitAudit(t, home, "kernel stopped", func(e audit.Entry) bool {
		return e.Kind == audit.KindKernel && e.Reason == "kernel stopped"
	})
}
