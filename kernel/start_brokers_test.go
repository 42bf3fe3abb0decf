package kernel_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
)

// runProxyFiles are what a caller hands with RunProxy: the lifeline's
// write end and the relay's receiving end; it keeps the lifeline's read
// end (returned) and the relay's sending end (closed at cleanup).
func runProxyFiles(t *testing.T) (life *os.File, files []*os.File) {
	t.Helper()
	lr, lw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	recv, send, err := connpass.Pair()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lr.Close(); lw.Close(); recv.Close(); send.Close() })
	return lr, []*os.File{lw, recv}
}

// netAgent makes agent demo, on the internet through its proxy.
func netAgent(t *testing.T, home string) {
	t.Helper()
	for _, args := range [][]string{{"agent", "create", "demo"}, {"agent", "allow", "demo", "--internet", "--command", "echo"}} {
		if out, code := lnk(t, home, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
	}
}

// compiledStart makes a start the kernel compiles, on c.
func compiledStart(t *testing.T, c *client.Client) uint64 {
	t.Helper()
	var r proto.StartReply
	if _, err := c.Call(ctx(t), proto.Start, &proto.StartRequest{Agent: "demo", Folders: []proto.Folder{}, Compile: true}, &r); err != nil {
		t.Fatal(err)
	}
	return r.Start
}

// netBroker is the pid of the start's proxy, from the kernel's status.
func netBroker(t *testing.T, c *client.Client, start uint64) int {
	t.Helper()
	st, err := c.Status(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range st.Brokers {
		if b.Name == fmt.Sprintf("net/%d", start) && b.PID != 0 {
			return b.PID
		}
	}
	t.Fatalf("no proxy of start %d among the kernel's brokers: %+v", start, st.Brokers)
	return 0
}

// lifeline reads the lifeline until the kernel closes it, failing after
// 30 s; it returns what the kernel said.
func lifeline(t *testing.T, lr *os.File) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		var said []string
		sc := bufio.NewScanner(lr)
		for sc.Scan() {
			said = append(said, sc.Text())
		}
		got <- strings.Join(said, "; ")
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(30 * time.Second):
		t.Fatal("the kernel did not close the run's lifeline within 30 s")
		return ""
	}
}

// gone waits (30 s at most) until pid has ended.
func gone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if unix.Kill(pid, 0) != nil {
			return
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && strings.Contains(string(b), ") Z ") {
			return // a zombie its parent has not reaped yet
		}
	}
	t.Fatalf("pid %d still runs", pid)
}

// TestRunProxyIsTheKernelsChildAndEndsWithTheStart: the kernel starts an
// agent's proxy as its own child, confined (seccomp filter and
// no_new_privs), for the start's connection alone: another connection, a
// lifeline that is no pipe's write end and a second proxy for the start
// are refused (each logged once), the proxy itself (the positive control)
// runs. The start's end stops it, removes its socket and closes the
// lifeline.
func TestRunProxyIsTheKernelsChildAndEndsWithTheStart(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	home := testenv.Home(t)
	netAgent(t, home)
	kp := startKernel(t, home)
	c := connect(t, home)
	start := compiledStart(t, c)
	lr, files := runProxyFiles(t)
	req := &proto.RunProxyRequest{Agent: "demo", Start: start}

	other := connect(t, home)
	_, err := other.Call(ctx(t), proto.RunProxy, req, &proto.RunProxyReply{}, files...)
	refusedWith(t, err, "made on another connection")
	notPipe := []*os.File{files[1], files[1]}
	_, err = c.Call(ctx(t), proto.RunProxy, req, &proto.RunProxyReply{}, notPipe...)
	refusedWith(t, err, "the lifeline")

	var rep proto.RunProxyReply
	if _, err := c.Call(ctx(t), proto.RunProxy, req, &rep, files...); err != nil {
		t.Fatal(err)
	}
	files[0].Close() // the kernel holds its own copy of the lifeline
	if !rep.Proxy || rep.Secret == "" || !filepath.IsAbs(rep.Socket) {
		t.Fatalf("no proxy told: %+v", rep)
	}
	if _, err := os.Lstat(rep.Socket); err != nil {
		t.Fatalf("the proxy's socket: %v", err)
	}
	pid := netBroker(t, connect(t, home), start)
	// It confines itself first thing: wait for its filter (30 s at most).
	var status []byte
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if status, err = os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(status), "Seccomp:\t2\n") || time.Now().After(deadline) {
			break
		}
	}
	for _, want := range []string{fmt.Sprintf("PPid:\t%d\n", kp.cmd.Process.Pid), "NoNewPrivs:\t1\n", "Seccomp:\t2\n"} {
		if !strings.Contains(string(status), want) {
			t.Errorf("the proxy (pid %d) is not the kernel's confined child: no %q in\n%s", pid, want, status)
		}
	}
	// A second proxy for the start is refused.
	_, more := runProxyFiles(t)
	_, err = c.Call(ctx(t), proto.RunProxy, req, &proto.RunProxyReply{}, more...)
	refusedWith(t, err, "has its proxy already")
	// The connection that made the start closes: the start ends, and
	// its proxy with it.
	c.Close()
	if why := lifeline(t, lr); !strings.Contains(why, "the start ended") {
		t.Errorf("the lifeline said %q, want the start's end", why)
	}
	gone(t, pid)
	if _, err := os.Lstat(rep.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the proxy's socket outlived its start: %v", err)
	}
	if n := strings.Count(dumpAudit(t, home), `"request":"run-proxy"`); n != 3 {
		t.Errorf("%d refusals of run-proxy logged, want 3:\n%s", n, dumpAudit(t, home))
	}
}

// TestRunProxyKilledEndsTheStartClosed: a start's proxy killed with
// SIGKILL mid-run is never started again (it held the sandbox's
// listener, which cannot be handed twice) and never leaves the start
// running without it: the start ends closed — its capabilities revoked,
// its sandbox killed through its pidfd, its socket removed, its
// lifeline, its watch and its End told why — and that is logged. The
// kernel and its other starts go on (the positive control: a new start
// gets a proxy).
func TestRunProxyKilledEndsTheStartClosed(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	home := testenv.Home(t)
	netAgent(t, home)
	startKernel(t, home)
	c := connect(t, home)
	start := compiledStart(t, c)
	lr, files := runProxyFiles(t)
	var rep proto.RunProxyReply
	if _, err := c.Call(ctx(t), proto.RunProxy, &proto.RunProxyRequest{Agent: "demo", Start: start}, &rep, files...); err != nil {
		t.Fatal(err)
	}
	files[0].Close()
	// The start's sandbox (a child of the test's standing in for
	// bubblewrap), recorded by its pidfd and watched, as lnk does.
	_, sbx := sandboxChild(t)
	if err := c.Attach(ctx(t), start, sbx); err != nil {
		t.Fatal(err)
	}
	watched := make(chan string, 1)
	go func() {
		why, err := c.Watch(ctx(t), start)
		if err != nil {
			why = "watch: " + err.Error()
		}
		watched <- why
	}()
	pid := netBroker(t, c, start)
	if err := unix.Kill(pid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	died := fmt.Sprintf("net/%d ended", start)
	if why := lifeline(t, lr); !strings.Contains(why, died) {
		t.Errorf("the lifeline said %q, want the proxy's end", why)
	}
	// The kernel kills the sandbox itself, and its watch and its
	// connection's End are told why: the proxy's end, not a bare end.
	if !ended(t, sbx, 30000) {
		t.Error("the start's sandbox still runs after its proxy died")
	}
	if why := <-watched; !strings.Contains(why, died) {
		t.Errorf("the watch said %q, want the proxy's end", why)
	}
	if end, err := c.EndStart(ctx(t), "demo", start); err != nil || !strings.Contains(end.Ended, died) {
		t.Errorf("the start's own End: %+v, %v; want the proxy's end", end, err)
	}
	if _, err := os.Lstat(rep.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead proxy's socket is still there: %v", err)
	}
	st, err := c.Status(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Starts {
		if s.Start == start {
			t.Errorf("start %d still holds %d capabilities", start, s.Caps)
		}
	}
	for _, b := range st.Brokers {
		if strings.HasSuffix(b.Name, fmt.Sprintf("/%d", start)) {
			t.Errorf("the start's broker %s was started again (pid %d)", b.Name, b.PID)
		}
	}
	waitAudit(t, home, "the start's closed end", func(e audit.Entry) bool {
		return e.Kind == audit.KindRevoke && e.Start == start && strings.Contains(e.Reason, "ended closed")
	})
	_, err = c.Call(ctx(t), proto.RunAsk, &proto.RunAskRequest{Agent: "demo", Start: start, Wait: "1m", Desktop: []string{}}, &proto.Empty{})
	refusedWith(t, err, "")

	again := compiledStart(t, c)
	lr2, files2 := runProxyFiles(t)
	if _, err := c.Call(ctx(t), proto.RunProxy, &proto.RunProxyRequest{Agent: "demo", Start: again}, &rep, files2...); err != nil {
		t.Fatalf("a new start after the kill: %v", err)
	}
	files2[0].Close()
	netBroker(t, c, again)
	if _, err := c.Call(ctx(t), proto.End, &proto.EndRequest{Agent: "demo", Start: again}, &proto.EndReply{}); err != nil {
		t.Fatal(err)
	}
	if why := lifeline(t, lr2); !strings.Contains(why, "the start ended") {
		t.Errorf("the lifeline said %q", why)
	}
}

// TestRunAskIsTheKernelsChildAndTakesOnlyDesktopVariables: the kernel
// starts a start's ask broker as its own confined child and hands the
// caller its channel (the positive control); a desktop variable that is
// none of the desktop session's (a way to smuggle LD_PRELOAD into the
// dialog launcher), an ask_wait out of range, a terminal said but not
// carried, and a second ask broker for the start are refused, and a
// refusal is logged.
func TestRunAskIsTheKernelsChildAndTakesOnlyDesktopVariables(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	home := testenv.Home(t)
	netAgent(t, home)
	kp := startKernel(t, home)
	c := connect(t, home)
	start := compiledStart(t, c)
	ask := func(wait string, terminal bool, desktop ...string) ([]*os.File, error) {
		if desktop == nil {
			desktop = []string{}
		}
		return c.Call(ctx(t), proto.RunAsk, &proto.RunAskRequest{Agent: "demo", Start: start, Wait: wait, Terminal: terminal, Desktop: desktop}, &proto.Empty{})
	}
	_, err := ask("1m", false, "HOME="+home, "LD_PRELOAD=/tmp/x.so")
	refusedWith(t, err, "none of the desktop session's")
	_, err = ask("0s", false)
	refusedWith(t, err, "more than nothing")
	_, err = ask("25h", false)
	refusedWith(t, err, "at most")
	_, err = ask("1m", true)
	refusedWith(t, err, "terminal says otherwise")

	got, err := ask("1m", false, "HOME="+home)
	if err != nil {
		t.Fatal(err)
	}
	got[0].Close()
	st, err := c.Status(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	pid := 0
	for _, b := range st.Brokers {
		if b.Name == fmt.Sprintf("ask/%d", start) {
			pid = b.PID
		}
	}
	if pid == 0 {
		t.Fatalf("no ask broker of start %d among the kernel's: %+v", start, st.Brokers)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil || !strings.Contains(string(status), fmt.Sprintf("PPid:\t%d\n", kp.cmd.Process.Pid)) {
		t.Errorf("the ask broker (pid %d) is not the kernel's child: %v\n%s", pid, err, status)
	}
	_, err = ask("1m", false)
	refusedWith(t, err, "has its ask broker already")
	if !strings.Contains(dumpAudit(t, home), "LD_PRELOAD") && !strings.Contains(dumpAudit(t, home), "none of the desktop session's") {
		t.Errorf("the refusal is not logged:\n%s", dumpAudit(t, home))
	}
}

// TestRunProxyThatFailsSaysWhy: a proxy that fails at its start (here a
// stand-in lnk-netbroker that says why and exits 1) ends its start
// closed, and the lifeline carries what it said, so lnk can tell the
// owner why the run ended, not only that it did.
func TestRunProxyThatFailsSaysWhy(t *testing.T) {
	home := testenv.Home(t)
	netAgent(t, home)
	bin := t.TempDir()
	for _, name := range []string{"lnk", "lnk-keybroker", "lnk-fsbroker"} {
		b, err := os.ReadFile(testenv.Bin(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const why = "refusing to start: a stand-in of the test"
	script := "#!/bin/sh\necho 'lnk-netbroker: " + why + "' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "lnk-netbroker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	startKernelOf(t, home, filepath.Join(bin, "lnk"))
	c := connect(t, home)
	start := compiledStart(t, c)
	lr, files := runProxyFiles(t)
	if _, err := c.Call(ctx(t), proto.RunProxy, &proto.RunProxyRequest{Agent: "demo", Start: start}, &proto.RunProxyReply{}, files...); err != nil {
		var we *wire.Error
		if !errors.As(err, &we) {
			t.Fatal(err)
		}
	}
	files[0].Close()
	said := lifeline(t, lr)
	if !strings.Contains(said, fmt.Sprintf("net/%d ended", start)) || !strings.Contains(said, why) {
		t.Errorf("the lifeline said %q, want the proxy's end and why", said)
	}
}
