package webhook

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// listenerProc is a real `lnk agent webhook serve` process.
type listenerProc struct {
	cmd    *exec.Cmd
	out    *testenv.SyncBuffer
	exited chan struct{} // closed once it ended, err set
	err    error
}

// wait is how p ended.
func (p *listenerProc) wait() error {
	<-p.exited
	return p.err
}

// startListener runs `lnk agent webhook serve` for agent a (HOME is the
// test's), stopped (SIGKILL) when the test ends if it still runs.
func startListener(t *testing.T, a Agent) *listenerProc {
	t.Helper()
	p := &listenerProc{out: &testenv.SyncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(testenv.Bin(t, "lnk"), "agent", "webhook", "serve", a.Name)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// listening waits until p takes connections at port, failing if it ends
// first.
func (p *listenerProc) listening(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-p.exited:
			t.Fatalf("the listener ended: %v\n%s", p.err, p.out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the listener is not listening at %d: %v\n%s", port, err, p.out)
		}
	}
}

// recordState is the record's two files as they are on disk: their
// inodes and bytes.
func recordState(t *testing.T, a Agent) string {
	t.Helper()
	record, log := seenPaths(a)
	var s strings.Builder
	for _, f := range []string{record, log} {
		st, err := os.Lstat(f)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(f)
		s.WriteString(strconv.FormatUint(st.Sys().(*syscall.Stat_t).Ino, 10) + " " + string(b) + "\n")
	}
	return s.String()
}

// TestOneListenerPerAgent: with real `lnk agent webhook serve`
// processes, a second listener of an agent whose listener runs is
// refused at its start (exit 1, naming the first's pid and the agent,
// with a hint) before it reads or writes the record, while the first
// still takes posts (the positive control) and refuses their replays;
// once the first is SIGKILLed (its ids in hooks-seen.log, never folded),
// a new listener starts, folds the log into hooks-seen.json, and refuses
// the replay of every id the killed one took.
func TestOneListenerPerAgent(t *testing.T) {
	a := testAgent(t)
	added, err := a.Add("ci", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(added.Secret.Destroy)
	s, err := a.Load()
	if err != nil {
		t.Fatal(err)
	}
	tr := &turner{release: make(chan struct{}), ended: make(chan struct{}, 16)}
	close(tr.release)
	startHarness(t, a, testKey(5), testKey(5), tr)
	openWayIn(t, a)
	r := &rig{a: a, secret: added.Secret, hook: added.Hook, base: "http://127.0.0.1:" + strconv.Itoa(s.Port)}
	p := "/h/" + r.hook.ID
	post := func(id string) int {
		return r.post(t, p, id, time.Now(), "application/json", []byte(`{"n":1}`), r.secret)
	}

	first := startListener(t, a)
	first.listening(t, s.Port)
	want(t, "a post to the first listener", post("k1"), 202)
	before := recordState(t, a)

	second := startListener(t, a)
	select {
	case <-second.exited:
		var exit *exec.ExitError
		if err := second.err; !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("the second listener: %v, want exit 1\n%s", second.err, second.out)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the second listener runs beside the first\n%s", second.out)
	}
	if after := recordState(t, a); after != before {
		t.Fatalf("the refused listener touched the record:\nbefore %s\nafter %s", before, after)
	}
	out := second.out.String()
	for _, w := range []string{"agent " + a.Name + ": another webhook listener of this agent is running (pid " + strconv.Itoa(first.cmd.Process.Pid) + " holds " + SeenLockName + ")", "hint: lnk agent status " + a.Name} {
		if !strings.Contains(out, w) {
			t.Fatalf("the second listener's refusal does not say %q:\n%s", w, out)
		}
	}

	want(t, "the first listener, after the second was refused", post("k2"), 202)
	want(t, "a replay to the first listener", post("k1"), 401)
	if !strings.Contains(onDisk(t, a), r.hook.ID+" k2") {
		t.Fatalf("k2 is not on disk:\n%s", onDisk(t, a))
	}

	first.cmd.Process.Kill()
	first.wait()
	third := startListener(t, a)
	third.listening(t, s.Port)
	record, _ := seenPaths(a)
	folded, err := os.ReadFile(record)
	if err != nil || !strings.Contains(string(folded), r.hook.ID+" k1") || !strings.Contains(string(folded), r.hook.ID+" k2") {
		t.Fatalf("the log was not folded into %s at the start: %s %v", SeenName, folded, err)
	}
	want(t, "a replay of k2, taken by the killed listener", post("k2"), 401)
	want(t, "a replay of k1, taken by the killed listener", post("k1"), 401)
	want(t, "a new post to the new listener", post("k3"), 202)
	if n := len(tr.messages()); n != 3 {
		t.Fatalf("the harness took %d posts, want 3 (k1, k2, k3)", n)
	}
	third.cmd.Process.Signal(syscall.SIGTERM)
	if err := third.wait(); err != nil {
		t.Fatalf("the listener asked to stop: %v\n%s", err, third.out)
	}
}
