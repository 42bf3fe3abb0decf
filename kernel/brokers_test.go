package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/brokerproc/child"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel"
	"lnk.dev/lnk/kernel/proto"
)

// inheritedFDs lists this process's fds without close-on-exec: what exec
// handed it (the Go runtime's own fds are all close-on-exec).
func inheritedFDs() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var fds []int
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && fl&unix.FD_CLOEXEC == 0 {
			fds = append(fds, fd)
		}
	}
	sort.Ints(fds)
	s := make([]string, len(fds))
	for i, fd := range fds {
		s[i] = strconv.Itoa(fd)
	}
	return strings.Join(s, ",")
}

// testBroker is this binary as a broker: a real process on a real
// channel, serving "fds" (what it inherited, listed before anything else
// ran) and "hold" (held in flight until the test releases it).
func testBroker() int {
	inherited := inheritedFDs()
	ch, _, err := child.Channel(true)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv, err := wire.NewServer(ch, wire.Table(
		wire.Handle(proto.TestBrokerFDs, func(ctx context.Context, _ *wire.Request, _ *proto.Empty) (*proto.FDsReply, []*os.File, error) {
			return &proto.FDsReply{FDs: inherited}, nil, nil
		}),
		wire.Handle(proto.TestBrokerHold, func(ctx context.Context, r *wire.Request, _ *proto.Empty) (*proto.Empty, []*os.File, error) {
			f := r.Files[0]
			f.Write([]byte{1})
			var b [1]byte
			for {
				if n, err := f.Read(b[:]); n == 0 || err != nil {
					break
				}
			}
			return &proto.Empty{}, nil, nil
		}),
	), nil)
	if err != nil {
		return 1
	}
	srv.Serve(context.Background())
	return 0
}

// runKernel runs a kernel in this process with the test broker, until
// the test ends.
func runKernel(t testing.TB, home string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bins := filepath.Dir(testenv.Bin(t, "lnk-fsbroker")) // a start with folders needs it
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- kernel.Run(ctx, kernel.Options{Home: home, Testing: true, Logf: t.Logf, BinDir: bins,
			Ready: func(string) { close(ready) },
			Brokers: []kernel.BrokerSpec{{
				Name: "test", Path: self, Env: []string{"LNK_KERNEL_TEST_BROKER=1"},
				Files: func(*kernel.Kernel) ([]*os.File, error) {
					f, err := os.Open(os.DevNull)
					return []*os.File{f}, err
				},
			}}})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the kernel ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the kernel did not listen within 30 s")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the kernel did not stop within 30 s")
		}
	})
}

// brokerPID polls status until the test broker is up with a pid other
// than not, and at least restarts restarts.
func brokerPID(t *testing.T, home string, not, restarts int) int {
	t.Helper()
	c := connect(t, home)
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := c.Status(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range st.Brokers {
			if b.Name == "test" && b.PID != 0 && b.PID != not && b.Restarts >= restarts {
				return b.PID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no test broker up (pid not %d, %d restarts) within 30 s: %+v", not, restarts, st.Brokers)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hold starts a broker-hold request and returns once the broker has it in
// flight: release lets it finish; the channel gives its outcome.
func hold(t *testing.T, home string) (release func(), outcome <-chan error) {
	t.Helper()
	c := connect(t, home)
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "ours"), os.NewFile(uintptr(pair[1]), "theirs")
	t.Cleanup(func() { ours.Close() })
	out := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx(t), proto.BrokerHold, &proto.Empty{}, &proto.Empty{}, theirs)
		theirs.Close()
		out <- err
	}()
	var b [1]byte
	if _, err := ours.Read(b[:]); err != nil {
		t.Fatalf("the broker never took the request: %v", err)
	}
	return func() { ours.Close() }, out
}

// kill -9 of a broker mid-request: the caller gets an error, never a
// hang; the kernel starts the broker again; the next request works.
func TestBrokerKilledMidRequestIsStartedAgain(t *testing.T) {
	home := testenv.Home(t)
	runKernel(t, home)
	first := brokerPID(t, home, 0, 0)
	_, outcome := hold(t, home)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-outcome
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != proto.CodeBroker || !strings.Contains(we.Message, "died mid-request") {
		t.Fatalf("the caller got %v, want a broker error", err)
	}
	second := brokerPID(t, home, first, 1)
	waitAudit(t, home, "the broker's death", func(e audit.Entry) bool {
		return e.Kind == audit.KindKernel && strings.Contains(e.Reason, "broker test exited")
	})
	release, outcome := hold(t, home)
	release()
	if err := <-outcome; err != nil {
		t.Fatalf("the request after the restart: %v", err)
	}
	if second == first {
		t.Fatal("same pid")
	}
}

// A broker inherits fds 0–2, its channel (3) and what it was handed
// (4), nothing else: not the kernel's socket, roots, log or other
// connections — before it started and after a restart.
func TestNoFDLeaksIntoABroker(t *testing.T) {
	home := testenv.Home(t)
	runKernel(t, home)
	first := brokerPID(t, home, 0, 0)
	c := connect(t, home)
	for round := 0; round < 2; round++ {
		// Open connections and a start with a folder, so the kernel holds more.
		makeAgent(t, home, "main")
		startAgent(t, c, "main", proto.Folder{Path: home + "/Link/Agents/main/Home", Read: true})
		var r proto.FDsReply
		if _, err := c.Call(ctx(t), proto.BrokerFDs, &proto.Empty{}, &r); err != nil {
			t.Fatal(err)
		}
		if r.FDs != "0,1,2,3,4" {
			t.Fatalf("round %d: the broker inherited fds %s, want 0,1,2,3,4", round, r.FDs)
		}
		if round == 0 {
			syscall.Kill(first, syscall.SIGKILL)
			brokerPID(t, home, first, 1)
		}
	}
}
