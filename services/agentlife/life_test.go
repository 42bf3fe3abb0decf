package agentlife

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestForegroundStartStatusStop: lnk agent start --foreground runs the
// supervisor in the terminal; the harness runs in its sandbox with its
// LNK_PORT and listens there; status --json says so, the log holds its
// output from the recorded offset on; stop ends the supervisor and
// leaves no process of the harness's.
func TestForegroundStartStatusStop(t *testing.T) {
	w := newWorld(t, "fg", "listen")
	os.WriteFile(w.logPath(), nil, 0o600) // absent: made by the start
	os.MkdirAll(filepath.Dir(w.logPath()), 0o700)
	os.WriteFile(w.logPath(), []byte("before this start\n"), 0o600)
	var stderr strings.Builder
	fg := exec.Command(w.lnk, "agent", "start", "--foreground", w.agent)
	fg.Stderr = &stderr
	if err := fg.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fg.Wait() }()
	w.waitFor("the harness listening", func() bool { return strings.Contains(w.log(), "listening on 127.0.0.1:") })
	s := w.status()
	first := s.Ports.First
	switch {
	case !s.Running || s.Mode != ModeForeground || s.Supervisor != fg.Process.Pid || s.PID == 0 || s.Starts != 1:
		t.Fatalf("status %+v, want running in the foreground under pid %d, start 1", s, fg.Process.Pid)
	case !s.Sandbox || s.RunningIn == nil || !*s.RunningIn || len(s.Enforces) == 0:
		t.Fatalf("status %+v: want its sandbox on, and what it enforces", s)
	case s.Ports.Count != 2:
		t.Fatalf("ports %+v, want the block of 2 agent.toml names", s.Ports)
	}
	if want := fmt.Sprintf("port=%d sandbox=1", first); !strings.Contains(w.log(), want) {
		t.Fatalf("the harness did not see %q in its sandbox:\n%s", want, w.log())
	}
	if off := w.startOffset(); off != int64(len("before this start\n")) {
		t.Fatalf("harness.start holds %d, want the log's size at the start, %d", off, len("before this start\n"))
	}
	if len(w.marked()) == 0 {
		t.Fatal("no harness process found by its mark")
	}
	tree := procTree(t, fg.Process.Pid)
	if len(tree) < 4 { // lnk itself, lnk sandbox run, bwrap, bwrap (pid 1), the harness
		t.Fatalf("the supervisor's tree holds %d processes: %v", len(tree), tree)
	}
	out := w.mustLnk("agent", "status", w.agent)
	for _, want := range []string{"running   yes", "sandbox   on", fmt.Sprintf("ports     %d-%d", first, first+1), "enforces", "background commands: none"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	w.mustLnk("agent", "stop", w.agent)
	if err := <-done; err != nil {
		t.Fatalf("the foreground supervisor ended with %v after stop:\n%s", err, stderr.String())
	}
	w.waitFor("no process of the harness after stop", func() bool { return len(w.marked()) == 0 })
	w.waitFor("no process of the supervisor's tree after stop", func() bool { return len(survivors(tree)) == 0 })
	if s := w.status(); s.Running || s.PID != 0 {
		t.Fatalf("status after stop: %+v", s)
	}
	if !strings.Contains(stderr.String(), "harness started") {
		t.Errorf("the foreground start said nothing of its harness:\n%s", stderr.String())
	}
}

// TestSupervisorKilledLeavesNothing: SIGKILL of a background supervisor,
// sandbox on, ends the sandbox and the harness with it (PDEATHSIG), and
// the agent starts again. With the sandbox off, the harness's own child
// in its group outlives the supervisor's death only until the next stop
// or start sweeps the group.
func TestSupervisorKilledLeavesNothing(t *testing.T) {
	for _, tc := range []struct {
		sandboxed bool
		sweptBy   string // what ends what the harness left: "start" or "stop"
	}{{true, "start"}, {false, "start"}, {false, "stop"}} {
		t.Run(fmt.Sprintf("sandbox=%v,then=%s", tc.sandboxed, tc.sweptBy), func(t *testing.T) {
			w := newWorld(t, "bg", "fork")
			args := []string{"agent", "start", w.agent}
			if !tc.sandboxed {
				args = []string{"agent", "start", "--no-sandbox", w.agent}
			}
			w.mustLnk(args...)
			w.waitFor("the harness listening", func() bool { return strings.Contains(w.log(), "listening on") })
			s := w.status()
			if !s.Running || s.Mode != ModeBackground {
				t.Fatalf("status %+v, want running in the background", s)
			}
			tree := procTree(t, s.Supervisor)
			if err := syscall.Kill(s.Supervisor, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if tc.sandboxed {
				// The sandbox's PID namespace ends with the lnk that
				// built it: nothing of the harness's is left, nor the
				// proxy, nor bubblewrap.
				w.waitFor("every process of the harness gone", func() bool { return len(w.marked()) == 0 })
				w.waitFor("every process the supervisor started gone", func() bool { return len(survivors(tree)) == 0 })
			} else {
				w.waitFor("the harness itself gone", func() bool { return !pidRuns(s.PID) })
			}
			// Its lock is let go once its last thread has ended, which
			// may come just after its harness's PDEATHSIG.
			w.waitFor("the killed supervisor's lock let go", func() bool { return !w.status().Running })
			if tc.sweptBy == "stop" {
				w.mustLnk("agent", "stop", w.agent)
				// The stop's sweep waited for each process it killed.
				if left := survivors(tree); len(left) > 0 {
					t.Fatalf("after stop, processes the killed supervisor started still run: %v", left)
				}
			}
			w.mustLnk("agent", "start", w.agent)
			w.waitFor("the harness listening again", func() bool { return strings.Count(w.log(), "listening on") == 2 })
			if st := w.status(); !st.Running || st.Starts != 1 || st.Supervisor == s.Supervisor {
				t.Fatalf("status after a new start: %+v", st)
			}
			// The new supervisor swept what the old one's harness left
			// in its group (sandbox off: the harness's own child).
			if left := survivors(tree); len(left) > 0 {
				t.Fatalf("after a new start, processes the killed supervisor started still run: %v", left)
			}
			w.mustLnk("agent", "stop", w.agent)
			w.waitFor("no process of the harness after stop", func() bool { return len(w.marked()) == 0 })
		})
	}
}

func pidRuns(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && len(b) > i+2 && b[i+2] != 'Z'
}

// TestHarnessKilledIsRestarted: SIGKILL of the harness inside its
// sandbox: the supervisor starts it again, status counts 2 starts, and
// harness.start moves to the log's size at the second start.
func TestHarnessKilledIsRestarted(t *testing.T) {
	w := newWorld(t, "again", "listen")
	w.mustLnk("agent", "start", w.agent)
	w.waitFor("the harness listening", func() bool { return strings.Contains(w.log(), "listening on") })
	first := w.startOffset()
	var inner int
	for _, p := range w.marked() {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline"); strings.HasPrefix(string(b), w.self+"\x00") {
			inner = p // the harness itself, not lnk sandbox run
		}
	}
	if inner == 0 {
		t.Fatal("the harness's own process not found")
	}
	syscall.Kill(inner, syscall.SIGKILL)
	w.waitFor("a second start", func() bool { return w.status().Starts == 2 })
	w.waitFor("the harness listening again", func() bool { return strings.Count(w.log(), "listening on") == 2 })
	s := w.status()
	if !s.Running || !strings.Contains(s.LastExit, "137") {
		t.Fatalf("status %+v: want running, its last end exit 137 (SIGKILL)", s)
	}
	if second := w.startOffset(); second <= first {
		t.Fatalf("harness.start %d after the restart, not past the first start's %d", second, first)
	}
	if !strings.Contains(w.log(), "starting it again") {
		t.Errorf("the log does not say the harness was started again:\n%s", w.log())
	}
}

// TestNoSandboxKeptWarnedRefused: --no-sandbox is written to agent.toml,
// kept by a plain start, warned on stderr and in the log at each start,
// shown in status, and the harness runs unconfined; --sandbox turns it
// back. machine.toml's unsandboxed = false refuses it (exit 3, a hint);
// unsandboxed = true allows it.
func TestNoSandboxKeptWarnedRefused(t *testing.T) {
	w := newWorld(t, "bare", "listen")
	code, _, errs := w.lnkCmd("agent", "start", "--no-sandbox", w.agent)
	if code != 0 || !strings.Contains(errs, "WITHOUT its sandbox") {
		t.Fatalf("start --no-sandbox: exit %d, no warning on stderr:\n%s", code, errs)
	}
	if !strings.Contains(w.agentTOML(), "no_sandbox = true") {
		t.Fatalf("agent.toml after --no-sandbox:\n%s", w.agentTOML())
	}
	w.waitFor("the harness unconfined", func() bool { return strings.Contains(w.log(), "sandbox=\n") })
	s := w.status()
	if s.Sandbox || s.RunningIn == nil || *s.RunningIn || len(s.Enforces) != 0 {
		t.Fatalf("status %+v: want the sandbox off and nothing enforced", s)
	}
	if out := w.mustLnk("agent", "status", w.agent); !strings.Contains(out, "sandbox   OFF") {
		t.Fatalf("status does not show the sandbox off:\n%s", out)
	}
	w.mustLnk("agent", "stop", w.agent)
	// Kept: a plain start runs it without its sandbox again, warned again.
	code, _, errs = w.lnkCmd("agent", "start", w.agent)
	if code != 0 || !strings.Contains(errs, "WITHOUT its sandbox") {
		t.Fatalf("second start: exit %d, no warning:\n%s", code, errs)
	}
	w.waitFor("two warnings in the log", func() bool { return strings.Count(w.log(), "WITHOUT its sandbox") == 2 })
	w.mustLnk("agent", "stop", w.agent)

	// machine.toml refuses it: with the setting kept, and when asked.
	machine := filepath.Join(w.home, ".lnk", "machine.toml")
	if err := os.WriteFile(machine, []byte("unsandboxed = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"agent", "start", w.agent}, {"agent", "start", "--no-sandbox", w.agent}, {"agent", "start", "--foreground", w.agent}} {
		code, _, errs := w.lnkCmd(args...)
		if code != 3 || !strings.Contains(errs, "unsandboxed = false") || !strings.Contains(errs, "hint: lnk agent start") {
			t.Fatalf("lnk %s with unsandboxed = false: exit %d, want 3 and a hint:\n%s", strings.Join(args, " "), code, errs)
		}
	}
	if len(w.marked()) != 0 || w.status().Running {
		t.Fatal("a refused start left something running")
	}
	// Status says the setting is refused here (caps.Agent.SandboxOff).
	if out := w.mustLnk("agent", "status", w.agent); !strings.Contains(out, "refused on this machine") || !strings.Contains(out, "unsandboxed = false") {
		t.Fatalf("status does not say the machine refuses the sandbox off:\n%s", out)
	}
	// Positive control: unsandboxed = true lets it run.
	os.WriteFile(machine, []byte("unsandboxed = true\n"), 0o600)
	if out := w.mustLnk("agent", "status", w.agent); !strings.Contains(out, "sandbox   OFF") || strings.Contains(out, "refused") {
		t.Fatalf("status with unsandboxed = true:\n%s", out)
	}
	w.mustLnk("agent", "start", w.agent)
	w.mustLnk("agent", "stop", w.agent)

	// --sandbox turns it back on: written, and the harness confined.
	os.WriteFile(machine, []byte("unsandboxed = false\n"), 0o600)
	code, _, errs = w.lnkCmd("agent", "start", "--sandbox", w.agent)
	if code != 0 || strings.Contains(errs, "WITHOUT") {
		t.Fatalf("start --sandbox: exit %d:\n%s", code, errs)
	}
	if strings.Contains(w.agentTOML(), "no_sandbox") {
		t.Fatalf("agent.toml after --sandbox still holds no_sandbox:\n%s", w.agentTOML())
	}
	w.waitFor("the harness in its sandbox", func() bool { return strings.Contains(w.log(), "sandbox=1\n") })
	if s := w.status(); !s.Sandbox || s.RunningIn == nil || !*s.RunningIn {
		t.Fatalf("status after --sandbox: %+v", s)
	}
}

// TestPortTakenRefusesStart: a program listening on one of the agent's
// ports on loopback refuses the start (exit 3, the port, a hint) and
// starts nothing; once it closes, the start goes ahead.
func TestPortTakenRefusesStart(t *testing.T) {
	w := newWorld(t, "ports", "listen")
	s := w.status()
	if s.Ports == nil || s.Ports.Count != 2 {
		t.Fatalf("ports %+v", s.Ports)
	}
	for _, addr := range []string{"127.0.0.1", "0.0.0.0", "[::1]"} {
		ln, err := net.Listen("tcp", net.JoinHostPort(strings.Trim(addr, "[]"), strconv.Itoa(s.Ports.First+1)))
		if err != nil {
			t.Logf("%s: %v (not checked)", addr, err)
			continue
		}
		code, _, errs := w.lnkCmd("agent", "start", w.agent)
		ln.Close()
		if code != 3 || !strings.Contains(errs, fmt.Sprintf("port %d", s.Ports.First+1)) || !strings.Contains(errs, "hint:") {
			t.Fatalf("with %s:%d taken: exit %d, want 3 naming the port, with a hint:\n%s", addr, s.Ports.First+1, code, errs)
		}
		if len(w.marked()) != 0 || w.status().Running {
			t.Fatal("a refused start left something running")
		}
	}
	w.mustLnk("agent", "start", w.agent)
	if !w.status().Running {
		t.Fatal("the start with its ports free did not run")
	}
}

// TestStartNamesItsProgram: lnk agent start NAME -- PROGRAM records it
// as [start] command, read back, and starts it (an agent naming none
// runs Link Harness: linkharness_test.go); a start while it runs is
// refused; delete stops it first, leaving nothing.
func TestStartNamesItsProgram(t *testing.T) {
	w := newWorld(t, "named", "listen")
	if code, _, errs := w.lnkCmd("agent", "start", "--sandbox", "--no-sandbox", w.agent); code != 2 {
		t.Fatalf("--sandbox with --no-sandbox: exit %d, want 2:\n%s", code, errs)
	}
	w.mustLnk("agent", "start", w.agent, "--", w.self, "agentlife-harness", w.mark, "listen")
	if !strings.Contains(w.agentTOML(), fmt.Sprintf("command = [%q, \"agentlife-harness\", %q, \"listen\"]", w.self, w.mark)) {
		t.Fatalf("agent.toml after start -- PROGRAM:\n%s", w.agentTOML())
	}
	w.waitFor("the harness listening", func() bool { return strings.Contains(w.log(), "listening on") })
	if code, _, errs := w.lnkCmd("agent", "start", w.agent); code != 1 || !strings.Contains(errs, "already running") || !strings.Contains(errs, "lnk agent restart") {
		t.Fatalf("a second start: exit %d:\n%s", code, errs)
	}
	// Running, a start that would change its setting changes nothing.
	if code, _, errs := w.lnkCmd("agent", "start", "--no-sandbox", w.agent); code != 1 || strings.Contains(w.agentTOML(), "no_sandbox") {
		t.Fatalf("start --no-sandbox while running: exit %d, agent.toml:\n%s\n%s", code, w.agentTOML(), errs)
	}
	w.mustLnk("agent", "restart", w.agent)
	if s := w.status(); !s.Running || s.Starts != 1 {
		t.Fatalf("after restart: %+v", s)
	}
	w.mustLnk("agent", "delete", w.agent)
	w.waitFor("no process of the harness after delete", func() bool { return len(w.marked()) == 0 })
}

// TestHarnessCannotTruncateItsLog: the harness writes a pipe the
// supervisor copies to the log, never the log's own descriptor, so its
// ftruncate of its stdout takes nothing of the log away.
func TestHarnessCannotTruncateItsLog(t *testing.T) {
	for _, sandboxed := range []bool{true, false} {
		t.Run(fmt.Sprintf("sandbox=%v", sandboxed), func(t *testing.T) {
			w := newWorld(t, "trunc", "truncate")
			os.MkdirAll(filepath.Dir(w.logPath()), 0o700)
			os.WriteFile(w.logPath(), []byte("an earlier start's line\n"), 0o600)
			args := []string{"agent", "start", w.agent}
			if !sandboxed {
				args = []string{"agent", "start", "--no-sandbox", w.agent}
			}
			w.mustLnk(args...)
			w.waitFor("the harness listening", func() bool { return strings.Contains(w.log(), "listening on") })
			log := w.log()
			if !strings.HasPrefix(log, "an earlier start's line\n") || !strings.Contains(log, "truncating stdout: invalid argument") {
				t.Fatalf("the harness reached its log's descriptor:\n%s", log)
			}
		})
	}
}

// TestHarnessInheritsNoStrayDescriptor: a descriptor the shell left open
// (not close-on-exec) in lnk agent start reaches neither the supervisor
// nor, with the sandbox off, the harness: it gets its output's pipe.
func TestHarnessInheritsNoStrayDescriptor(t *testing.T) {
	w := newWorld(t, "fds", "listen")
	stray, err := os.Create(filepath.Join(t.TempDir(), "stray-"+w.mark))
	if err != nil {
		t.Fatal(err)
	}
	defer stray.Close()
	c := exec.Command(w.lnk, "agent", "start", "--no-sandbox", w.agent)
	c.ExtraFiles = []*os.File{stray} // fd 3 of lnk, not close-on-exec
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("start: %v\n%s", err, out)
	}
	w.waitFor("the harness listening", func() bool { return strings.Contains(w.log(), "listening on") })
	if strings.Contains(w.log(), "stray-") {
		t.Fatalf("the harness holds the stray descriptor:\n%s", w.log())
	}
	if !strings.Contains(w.log(), "fd 1 pipe:") {
		t.Fatalf("the harness's stdout is not its pipe:\n%s", w.log())
	}
	s := w.status()
	defer func() {
		// In the foreground the supervisor is that lnk itself: it marks
		// what it inherited close-on-exec before it starts the harness.
		w.mustLnk("agent", "stop", w.agent)
		fg := exec.Command(w.lnk, "agent", "start", "--foreground", w.agent)
		fg.ExtraFiles = []*os.File{stray}
		if err := fg.Start(); err != nil {
			t.Fatal(err)
		}
		defer fg.Wait()
		defer w.lnkCmd("agent", "stop", w.agent)
		w.waitFor("the harness listening again", func() bool { return strings.Count(w.log(), "listening on") == 2 })
		if strings.Contains(w.log(), "stray-") {
			t.Fatalf("the harness under a foreground supervisor holds the stray descriptor:\n%s", w.log())
		}
	}()
	if os.Geteuid() != 0 {
		// Undumpable, its /proc files are root's: the owner's other
		// processes can't read its environment or trace it. (As root
		// the owner is root either way: checked as the unprivileged
		// owner, scripts/test-as-user.sh.)
		if st, err := os.Stat("/proc/" + strconv.Itoa(s.Supervisor) + "/environ"); err != nil || st.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Errorf("the supervisor is dumpable: its environ is not root's (%v)", err)
		}
	}
	ents, _ := os.ReadDir("/proc/" + strconv.Itoa(s.Supervisor) + "/fd")
	for _, e := range ents {
		if target, _ := os.Readlink("/proc/" + strconv.Itoa(s.Supervisor) + "/fd/" + e.Name()); strings.Contains(target, "stray-") {
			t.Fatalf("the supervisor holds the stray descriptor as fd %s", e.Name())
		}
	}
}

// TestStatusShowsBackgroundCommands: the run tool's records of
// background commands are shown by status, the agent's command on one
// line without its escape sequences, and whole in --json.
func TestStatusShowsBackgroundCommands(t *testing.T) {
	w := newWorld(t, "bgcmds", "listen")
	dir := filepath.Join(w.home, ".lnk", "agents", w.id, "background")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// A record as the run tool writes it (services/runtool.Record).
	rec := `{"id":"00000000c0ffee00","state":"running","argv":["make","\u001b]0;pwned\u0007build\nnext"]}`
	if err := os.WriteFile(filepath.Join(dir, "00000000c0ffee00.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	// Beside it, what the run tool keeps that is no record: none is
	// shown as one.
	os.WriteFile(filepath.Join(dir, ".00000000c0ffee00.json.tmp-1"), []byte("{"), 0o600) // a write under way
	os.WriteFile(filepath.Join(dir, "00000000c0ffee00.lock"), nil, 0o600)
	os.WriteFile(filepath.Join(dir, "00000000c0ffee00.ending.json"), []byte(`{"id":"00000000c0ffee00","from":"run:00000000c0ffee00"}`), 0o600)
	os.WriteFile(filepath.Join(dir, "starts.json"), []byte(`{"day":"2026-01-01","starts":1}`), 0o600)
	out := w.mustLnk("agent", "status", w.agent)
	if !strings.Contains(out, "background commands\n  00000000c0ffee00 running make ]0;pwnedbuild next\n") || strings.ContainsAny(out, "\x1b\x07") {
		t.Fatalf("status:\n%q", out)
	}
	if strings.Contains(out, "  - ") || strings.Count(out, "00000000c0ffee00") != 1 {
		t.Fatalf("status shows what is no record as one:\n%s", out)
	}
	js := w.mustLnk("agent", "status", w.agent, "--json")
	if !strings.Contains(js, `"id": "00000000c0ffee00"`) || strings.Contains(js, `"day"`) || strings.Contains(js, `"from"`) {
		t.Fatalf("status --json:\n%s", js)
	}
}
