package kernel_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
)

// sandboxChild starts a process of the test's own (standing in for
// bubblewrap) with a pidfd made by clone; it is killed at cleanup.
func sandboxChild(t *testing.T) (*exec.Cmd, *os.File) {
	t.Helper()
	pidfd := -1
	cmd := exec.Command("sleep", "600")
	cmd.SysProcAttr = &syscall.SysProcAttr{PidFD: &pidfd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	f := os.NewFile(uintptr(pidfd), "pidfd")
	t.Cleanup(func() { f.Close() })
	return cmd, f
}

// ended waits (up to wait ms) for the process pidfd names to end.
func ended(t *testing.T, pidfd *os.File, wait int) bool {
	t.Helper()
	pfd := []unix.PollFd{{Fd: int32(pidfd.Fd()), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, wait)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
}

// statusPID is the pid the kernel lists for start, 0 if none, -1 if the
// start is not listed.
func statusPID(t *testing.T, c *client.Client, start uint64) int {
	t.Helper()
	st, err := c.Status(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Starts {
		if s.Start == start {
			return s.PID
		}
	}
	return -1
}

// TestOpenFolderHandsTheStartsOwnHandle: the connection that made a start
// gets its folder as the kernel's O_PATH handle of that very folder; any
// other connection, or a handle that is no capability, is refused.
func TestOpenFolderHandsTheStartsOwnHandle(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	dir := makeAgent(t, home, "a")
	c := connect(t, home)
	st := startAgent(t, c, "a", proto.Folder{Path: dir, Read: true, Write: true})

	ci, f, err := c.OpenFolder(ctx(t), st.Start, st.Caps[0].Handle)
	if err != nil {
		t.Fatalf("the start's own connection: %v", err)
	}
	defer f.Close()
	var got, want unix.Stat_t
	unix.Fstat(int(f.Fd()), &got)
	unix.Stat(dir, &want)
	if ci.Route != dir || ci.Rights != "read,write" || got.Dev != want.Dev || got.Ino != want.Ino {
		t.Fatalf("got %+v, dev/ino %d/%d, want %s's %d/%d", ci, got.Dev, got.Ino, dir, want.Dev, want.Ino)
	}
	fl, _ := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	fd, _ := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
	if fl&unix.O_PATH == 0 || fd&unix.FD_CLOEXEC == 0 {
		t.Fatalf("flags %#x, fd flags %#x: want O_PATH and close-on-exec", fl, fd)
	}

	other := connect(t, home)
	if _, _, err := other.OpenFolder(ctx(t), st.Start, st.Caps[0].Handle); err == nil {
		t.Fatal("another connection got the start's folder")
	} else {
		refusedWith(t, err, "no start of this connection's")
	}
	_, _, err = c.OpenFolder(ctx(t), st.Start, strings.Repeat("0", 32))
	refusedWith(t, err, "no such capability")
	waitAudit(t, home, "refusing the other connection's open-folder", func(e audit.Entry) bool {
		return e.Kind == audit.KindRefuse && e.Request == "open-folder" && e.Start == st.Start
	})
}

// TestAttachTakesOnlyAPidfdOfTheCallersChild: a pipe, and a pidfd of a
// process that is not the caller's child, are refused; the caller's
// child is recorded and listed with its pid.
func TestAttachTakesOnlyAPidfdOfTheCallersChild(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	dir := makeAgent(t, home, "a")
	c := connect(t, home)
	st := startAgent(t, c, "a", proto.Folder{Path: dir, Read: true})

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	refusedWith(t, c.Attach(ctx(t), st.Start, r), "no pidfd")
	initfd, err := unix.PidfdOpen(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	init := os.NewFile(uintptr(initfd), "pidfd-1")
	defer init.Close()
	refusedWith(t, c.Attach(ctx(t), st.Start, init), "not a child of the process that made the start")
	if pid := statusPID(t, c, st.Start); pid != 0 {
		t.Fatalf("after refusals the start lists pid %d", pid)
	}

	cmd, pidfd := sandboxChild(t)
	if err := c.Attach(ctx(t), st.Start, pidfd); err != nil {
		t.Fatalf("the caller's own child: %v", err)
	}
	if pid := statusPID(t, c, st.Start); pid != cmd.Process.Pid {
		t.Fatalf("status lists pid %d, want %d", pid, cmd.Process.Pid)
	}
	refusedWith(t, c.Attach(ctx(t), st.Start, pidfd), "has its sandbox already")
}

// TestEndAgentKillsItsSandboxesAlone: ending agent a kills a's sandbox
// through the pidfd the kernel holds, answers its watch with why, tells
// its connection's End so, and revokes the start; agent b's sandbox
// runs on (the control) until its connection closes, which kills it too.
func TestEndAgentKillsItsSandboxesAlone(t *testing.T) {
	home := testenv.Home(t)
	startKernel(t, home)
	da, db := makeAgent(t, home, "a"), makeAgent(t, home, "b")
	ca, cb := connect(t, home), connect(t, home)
	sa := startAgent(t, ca, "a", proto.Folder{Path: da, Read: true})
	sb := startAgent(t, cb, "b", proto.Folder{Path: db, Read: true})
	_, fa := sandboxChild(t)
	pb, fb := sandboxChild(t)
	if err := ca.Attach(ctx(t), sa.Start, fa); err != nil {
		t.Fatal(err)
	}
	if err := cb.Attach(ctx(t), sb.Start, fb); err != nil {
		t.Fatal(err)
	}
	type watched struct {
		why string
		err error
	}
	wa := make(chan watched, 1)
	go func() { why, err := ca.Watch(ctx(t), sa.Start); wa <- watched{why, err} }()

	owner := connect(t, home)
	r, err := owner.EndAgent(ctx(t), "a")
	if err != nil || r.Starts != 1 || r.Killed != 1 || r.Revoked != 1 {
		t.Fatalf("end a: %+v, %v", r, err)
	}
	w := <-wa
	if w.err != nil || !strings.Contains(w.why, "lnk kernel end a") {
		t.Fatalf("a's watch: %q, %v", w.why, w.err)
	}
	if !ended(t, fa, 30000) {
		t.Fatal("a's sandbox still runs after the end of a")
	}
	end, err := ca.EndStart(ctx(t), "a", sa.Start)
	if err != nil || !strings.Contains(end.Ended, "lnk kernel end a") {
		t.Fatalf("a's own End: %+v, %v", end, err)
	}
	if err := check(ca, t, "a", sa.Caps[0].Handle); err == nil {
		t.Fatal("a's capability outlived the end of a")
	}

	// The control: b's sandbox and capability live on.
	if ended(t, fb, 0) || statusPID(t, owner, sb.Start) != pb.Process.Pid {
		t.Fatal("ending a touched b's sandbox")
	}
	if err := check(cb, t, "b", sb.Caps[0].Handle); err != nil {
		t.Fatalf("b's capability: %v", err)
	}
	if r, err := owner.EndAgent(ctx(t), "nobody"); err != nil || r.Starts != 0 {
		t.Fatalf("an agent with no start: %+v, %v", r, err)
	}
	_, err = owner.EndAgent(ctx(t), "../a")
	refusedWith(t, err, "agent name")

	// b's connection gone, the kernel kills its sandbox.
	cb.Close()
	waitAudit(t, home, "b's revocation", func(e audit.Entry) bool {
		return e.Kind == audit.KindRevoke && e.Agent == "b"
	})
	if !ended(t, fb, 30000) {
		t.Fatal("b's sandbox did not end with its connection")
	}
}

// TestWatchEndsWhenTheKernelStops: a stopping kernel answers a watch
// "stopping" (lnk then kills the sandbox), never leaves it hanging.
func TestWatchEndsWhenTheKernelStops(t *testing.T) {
	home := testenv.Home(t)
	kp := startKernel(t, home)
	dir := makeAgent(t, home, "a")
	c := connect(t, home)
	st := startAgent(t, c, "a", proto.Folder{Path: dir, Read: true})
	_, pidfd := sandboxChild(t)
	if err := c.Attach(ctx(t), st.Start, pidfd); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := c.Watch(ctx(t), st.Start); done <- err }()
	kp.cmd.Process.Signal(syscall.SIGTERM)
	err := <-done
	var we *wire.Error
	if err == nil || !(errors.As(err, &we) && we.Code == proto.CodeStopping || errors.Is(err, wire.ErrClosed)) {
		t.Fatalf("watch across the kernel's stop: %v", err)
	}
	kp.wait(t)
	if !ended(t, pidfd, 30000) {
		t.Fatal("the stopped kernel left its start's sandbox running")
	}
}
