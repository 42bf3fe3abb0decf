package brokerproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/wire"
)

func TestBrokerHoldsOnlyWhatItWasHanded(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	p, _ := startTestBroker(t, null)
	checkHeld(t, p.Pid(), "")
}

// A stray fd beyond those the count names (as a careless parent might
// leave one without close-on-exec) is closed by the broker's first act.
func TestBrokerClosesAStrayInheritedFD(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(t.TempDir(), "stray")
	sf, err := os.Create(stray)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	proc, err := os.StartProcess(exe, []string{exe}, &os.ProcAttr{
		Env:   []string{"LNK_BROKER_FDS=1", childMarker + "=1"},
		Files: []*os.File{nil, nil, os.Stderr, theirs, null, sf},
	})
	theirs.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proc.Kill(); proc.Wait() })
	cl, err := wire.NewClient(ours)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Call(context.Background(), specPing, &empty{}, &empty{}); err != nil {
		t.Fatal(err)
	}
	checkHeld(t, proc.Pid, stray)
}

// checkHeld fails unless pid holds only 0–2, the channel on 3, /dev/null
// on 4, and fds its own runtime opened.
func checkHeld(t *testing.T, pid int, stray string) {
	t.Helper()
	fds := fdsOf(t, pid)
	sockets := 0
	for fd, target := range fds {
		switch {
		case fd <= 2:
		case strings.HasPrefix(target, "socket:"):
			sockets++ // the channel (internal/wire dups it off fd 3)
		case fd == 4 && target == os.DevNull:
		case stray != "" && target == stray:
			t.Errorf("the broker kept the stray fd %d → %s", fd, target)
		case cloexec(t, pid, fd):
			// Opened by the broker's own runtime (its poller, the cgroup
			// files it reads for GOMAXPROCS): exec closed every inherited
			// fd that had the flag, so this one was not handed over.
		default:
			t.Errorf("the broker holds fd %d → %s, which it was not handed", fd, target)
		}
	}
	if fds[4] != os.DevNull || sockets != 1 {
		t.Errorf("the broker holds %d sockets (want its one channel) or its fd 4 is not the extra file:%s", sockets, describe(fds))
	}
}

func TestBrokerEnvironmentIsFixed(t *testing.T) {
	t.Setenv("LNK_SOME_SECRET", "must-not-pass")
	p, _ := startTestBroker(t)
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	want := "LNK_BROKER_FDS=0\x00" + childMarker + "=1\x00"
	if string(env) != want {
		t.Fatalf("the broker's environment is %q, want %q", env, want)
	}
}

func TestKillMidRequestFailsTheCaller(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, cl := startTestBroker(t, w)
	w.Close()
	errc := make(chan error, 1)
	go func() {
		_, err := cl.Call(context.Background(), specBlock, &empty{}, &empty{})
		errc <- err
	}()
	// The broker says, on the pipe, that the request is in its handler.
	if _, err := r.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	p.Kill()
	if err := <-errc; !errors.Is(err, wire.ErrClosed) {
		t.Fatalf("caller got %v, want ErrClosed", err)
	}
	if _, err := cl.Call(context.Background(), specPing, &empty{}, &empty{}); !errors.Is(err, wire.ErrClosed) {
		t.Fatalf("a call after the broker died got %v, want ErrClosed", err)
	}
}

func TestBrokerRefusesAnFD3ThatIsNoChannel(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Started by hand, with a pipe where the channel belongs.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var stderr bytes.Buffer
	attr := &os.ProcAttr{
		Env:   []string{"LNK_BROKER_FDS=0", childMarker + "=1"},
		Files: []*os.File{nil, nil, nil, r},
	}
	er, ew, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	attr.Files[2] = ew
	proc, err := os.StartProcess(exe, []string{exe}, attr)
	ew.Close()
	if err != nil {
		t.Fatal(err)
	}
	stderr.ReadFrom(er)
	er.Close()
	st, err := proc.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode() != 2 || !strings.Contains(stderr.String(), "not a SOCK_SEQPACKET socket") {
		t.Fatalf("exit %d, stderr %q: want a refusal", st.ExitCode(), stderr.String())
	}
}

// cloexec reports whether pid's fd has O_CLOEXEC, from its fdinfo.
func cloexec(t *testing.T, pid, fd int) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "flags:"); ok {
			var flags uint64
			fmt.Sscanf(strings.TrimSpace(v), "%o", &flags)
			return flags&unix.O_CLOEXEC != 0
		}
	}
	return false
}

// A broker has a process group of its own, so the terminal's ^C never
// reaches it; with TerminalGroup it stays in the caller's (the
// terminal's foreground group), so it may read that terminal.
func TestTerminalGroupKeepsTheCallersProcessGroup(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, same := range []bool{false, true} {
		p, err := Start(Options{Path: exe, Env: []string{childMarker + "=1"}, Log: os.Stderr, TerminalGroup: same})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := wire.NewClient(p.Chan)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Call(context.Background(), specPing, &empty{}, &empty{}); err != nil {
			t.Fatalf("the broker does not answer: %v", err)
		}
		pgid, err := unix.Getpgid(p.Pid())
		cl.Close()
		p.Kill()
		if err != nil {
			t.Fatal(err)
		}
		if got := pgid == unix.Getpgrp(); got != same {
			t.Errorf("TerminalGroup %v: the broker's group %d, the caller's %d", same, pgid, unix.Getpgrp())
		}
		if !same && pgid != p.Pid() {
			t.Errorf("without TerminalGroup the broker's group is %d, not its own %d", pgid, p.Pid())
		}
	}
}
