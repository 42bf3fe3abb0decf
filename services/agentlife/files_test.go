package agentlife

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// TestPortBlocksNeverOverlap: each agent but main gets a block of its
// harness's count and one more (200 when unsaid), recorded in its
// agent.toml; a block copied from another agent's is moved, and one
// already its own is kept.
func TestPortBlocksNeverOverlap(t *testing.T) {
	home := testenv.Home(t)
	for _, n := range []string{"main", "a", "b", "c"} {
		if _, err := caps.CreateAgent(home, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := caps.UpdateAgent(home, "a", func(a *caps.Agent) error { a.Start = &caps.AgentStart{Ports: 4}; return nil }); err != nil {
		t.Fatal(err)
	}
	m, err := EnsurePorts(home, "main")
	if err != nil || m != nil {
		t.Fatalf("main: %+v, %v; want no block", m, err)
	}
	pa, err := EnsurePorts(home, "a")
	if err != nil || pa.Count != 5 || pa.First != PortBase {
		t.Fatalf("a: %+v, %v; want 5 ports from %d", pa, err, PortBase)
	}
	pb, err := EnsurePorts(home, "b")
	if err != nil || pb.Count != caps.DefaultPorts || pb.Overlaps(*pa) {
		t.Fatalf("b: %+v, %v; want 200 ports clear of a's %+v", pb, err, pa)
	}
	// c's agent.toml copied a's block: c is moved, a keeps its own.
	if _, err := caps.UpdateAgent(home, "c", func(c *caps.Agent) error { c.Ports = &caps.PortBlock{First: pa.First, Count: 200}; return nil }); err != nil {
		t.Fatal(err)
	}
	pc, err := EnsurePorts(home, "c")
	if err != nil || pc.Overlaps(*pa) || pc.Overlaps(*pb) {
		t.Fatalf("c: %+v, %v; overlaps a %+v or b %+v", pc, err, pa, pb)
	}
	again, err := EnsurePorts(home, "a")
	if err != nil || *again != *pa {
		t.Fatalf("a again: %+v, %v; want its block kept, %+v", again, err, pa)
	}
	// Read back from agent.toml, as every other lnk sees it.
	for n, want := range map[string]*caps.PortBlock{"a": pa, "b": pb, "c": pc} {
		a, err := caps.LoadAgent(home, n)
		if err != nil || a.Ports == nil || *a.Ports != *want {
			t.Fatalf("%s's agent.toml: %+v, %v; want %+v", n, a.Ports, err, want)
		}
	}
}

// TestLogRefusedUnlessRegularFile: a link (to a file of the owner's), a
// fifo, a folder or a second hard link in the log's place is refused and
// nothing is written through it; a regular log is appended to, and its
// size at the start recorded in harness.start.
func TestLogRefusedUnlessRegularFile(t *testing.T) {
	home := testenv.Home(t)
	logs := filepath.Join(home, ".lnk", "agents", "x", "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(home, ".lnk"), 0o700)
	os.Chmod(filepath.Join(home, ".lnk", "agents"), 0o700)
	os.Chmod(filepath.Join(home, ".lnk", "agents", "x"), 0o700)
	victim := filepath.Join(home, ".zshrc")
	os.WriteFile(victim, []byte("mine\n"), 0o600)
	log := filepath.Join(logs, "harness.log")
	for what, plant := range map[string]func() error{
		"a link":      func() error { return os.Symlink(victim, log) },
		"a fifo":      func() error { return syscall.Mkfifo(log, 0o600) },
		"a folder":    func() error { return os.Mkdir(log, 0o700) },
		"a hard link": func() error { return os.Link(victim, log) },
	} {
		if err := plant(); err != nil {
			t.Fatal(err)
		}
		l, err := openLog(home, "x", "harness", nil)
		if err == nil {
			l.Close()
			t.Errorf("%s in the log's place was opened", what)
		} else if !strings.Contains(err.Error(), "harness.log") {
			t.Errorf("%s: the refusal does not name the log: %v", what, err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "mine\n" {
			t.Fatalf("%s: written through: %q", what, b)
		}
		os.RemoveAll(log)
	}
	// A last line without its end (a killed supervisor's) is ended
	// before the offset is taken; a log ending in one is left as it is.
	os.WriteFile(log, []byte("0123456789"), 0o600)
	l, err := openLog(home, "x", "harness", nil)
	if err != nil {
		t.Fatalf("a regular log: %v", err)
	}
	if l.start.Offset != 11 {
		t.Fatalf("a regular log's start %+v, want 11", l.start)
	}
	l.Write([]byte("more\n"))
	l.Close()
	if b, _ := os.ReadFile(log); string(b) != "0123456789\nmore\n" {
		t.Fatalf("log %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(logs, "harness.start")); string(b) != "11" {
		t.Fatalf("harness.start %q, want 11", b)
	}
	if l, err = openLog(home, "x", "harness", nil); err != nil {
		t.Fatalf("a log ending in a newline: %v", err)
	}
	if l.start.Offset != 16 {
		t.Fatalf("a log ending in a newline: start %+v, want 16", l.start)
	}
	l.Close()
}

// TestUnitFileVerifies: the unit Link writes for an agent passes
// systemd-analyze verify, is written 0600 through no link, and runs the
// supervisor with Restart=on-failure and KillMode=control-group.
func TestUnitFileVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	testenv.Require(t, err == nil, "systemd-analyze (make deps installs it)")
	home := testenv.Home(t)
	a, err := caps.CreateAgent(home, "unit")
	if err != nil {
		t.Fatal(err)
	}
	lnk := testenv.Bin(t, "lnk")
	p, err := InstallUnit(home, "", lnk, a)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(home, ".config", "systemd", "user", "lnk-agent-"+a.ID+".service"); p != want {
		t.Fatalf("written to %s, want %s", p, want)
	}
	st, err := os.Lstat(p)
	if err != nil || st.Mode() != 0o600 {
		t.Fatalf("unit %v, %v: want a 0600 file", st, err)
	}
	b, _ := os.ReadFile(p)
	for _, want := range []string{"ExecStart=\"" + lnk + "\" agent supervise --mode unit unit\n", "Environment=\"HOME=" + home + "\"\n", "Restart=on-failure\n", "KillMode=control-group\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("unit lacks %q:\n%s", want, b)
		}
	}
	if out, err := exec.Command(analyze, "verify", p).CombinedOutput(); err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s\n%s", err, out, b)
	}
	// A link in the unit's place is refused, never written through.
	os.Remove(p)
	victim := filepath.Join(home, "victim")
	os.WriteFile(victim, []byte("mine"), 0o600)
	os.Symlink(victim, p)
	if _, err := InstallUnit(home, "", lnk, a); err == nil {
		t.Fatal("a link in the unit's place was written through")
	}
	if b, _ := os.ReadFile(victim); string(b) != "mine" {
		t.Fatalf("victim now %q", b)
	}
}
