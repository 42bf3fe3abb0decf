package agentlife

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestYesNeverTurnsTheSandboxOff: lnk agent start --yes runs the harness
// in its sandbox (agent.toml holds no no_sandbox, the harness sees its
// sandbox, status lists what it enforces, no warning), kept so at the
// next start; --no-sandbox, the only way off, turns it off beside --yes
// (the positive control) where machine.toml's unsandboxed = true, and is
// refused, --yes or not, where it is false.
func TestYesNeverTurnsTheSandboxOff(t *testing.T) {
	w := newWorld(t, "bare", "listen")
	machine := filepath.Join(w.home, ".lnk", "machine.toml")
	if err := os.WriteFile(machine, []byte("unsandboxed = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errs := w.lnkCmd("agent", "start", "--yes", w.agent)
	if code != 0 || strings.Contains(errs, "WITHOUT") {
		t.Fatalf("start --yes: exit %d:\n%s", code, errs)
	}
	if strings.Contains(w.agentTOML(), "no_sandbox") {
		t.Fatalf("agent.toml after --yes:\n%s", w.agentTOML())
	}
	w.waitFor("the harness in its sandbox", func() bool { return strings.Contains(w.log(), "sandbox=1") })
	if s := w.status(); !s.Sandbox || s.RunningIn == nil || !*s.RunningIn || len(s.Enforces) == 0 {
		t.Fatalf("status after --yes %+v: want the sandbox on, and what it enforces", s)
	}
	w.mustLnk("agent", "stop", w.agent)

	// The control: --no-sandbox beside --yes turns it off, written.
	code, _, errs = w.lnkCmd("agent", "start", "--yes", "--no-sandbox", w.agent)
	if code != 0 || !strings.Contains(errs, "WITHOUT its sandbox") {
		t.Fatalf("start --yes --no-sandbox: exit %d, no warning:\n%s", code, errs)
	}
	if !strings.Contains(w.agentTOML(), "no_sandbox = true") {
		t.Fatalf("agent.toml after --no-sandbox:\n%s", w.agentTOML())
	}
	if s := w.status(); s.Sandbox || s.RunningIn == nil || *s.RunningIn || len(s.Enforces) != 0 {
		t.Fatalf("status after --no-sandbox %+v: want the sandbox off", s)
	}
	w.mustLnk("agent", "stop", w.agent)
	w.mustLnk("agent", "start", "--sandbox", w.agent)
	w.mustLnk("agent", "stop", w.agent)

	// Refused where the machine refuses it, --yes or not; nothing written.
	os.WriteFile(machine, []byte("unsandboxed = false\n"), 0o600)
	code, _, errs = w.lnkCmd("agent", "start", "--yes", "--no-sandbox", w.agent)
	if code != 3 || !strings.Contains(errs, "unsandboxed = false") || !strings.Contains(errs, "hint: lnk agent start") {
		t.Fatalf("start --yes --no-sandbox with unsandboxed = false: exit %d, want 3 and a hint:\n%s", code, errs)
	}
	if strings.Contains(w.agentTOML(), "no_sandbox") || w.status().Running {
		t.Fatalf("a refused start wrote the setting or runs:\n%s", w.agentTOML())
	}
}
