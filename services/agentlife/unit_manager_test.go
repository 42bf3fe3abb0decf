package agentlife

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// TestUnitStartKillRestart, where a systemd user manager runs: lnk agent
// start runs the agent as its unit; SIGKILL of the supervisor has
// systemd start the unit again (Restart=on-failure) with nothing of the
// old harness left; stop stops the unit and everything in it.
func TestUnitStartKillRestart(t *testing.T) {
	w := newWorld(t, "unit", "listen")
	testenv.RequireUserManager(t)
	unit := UnitName(w.id)
	t.Cleanup(func() {
		exec.Command("systemctl", "--user", "stop", unit).Run()
	})
	w.mustLnk("agent", "start", w.agent)
	w.waitFor("the harness listening", func() bool { return strings.Contains(w.log(), "listening on") })
	s := w.status()
	if !s.Running || s.Mode != ModeUnit {
		t.Fatalf("status %+v, want running as its unit", s)
	}
	if exec.Command("systemctl", "--user", "is-active", "--quiet", unit).Run() != nil {
		t.Fatalf("%s is not active", unit)
	}
	syscall.Kill(s.Supervisor, syscall.SIGKILL)
	w.waitFor("the unit started again by systemd", func() bool {
		st := w.status()
		return st.Running && st.Supervisor != s.Supervisor && st.PID != 0
	})
	if pidRuns(s.PID) {
		t.Fatalf("the old harness (pid %d) outlived its supervisor", s.PID)
	}
	w.mustLnk("agent", "stop", w.agent)
	if exec.Command("systemctl", "--user", "is-active", "--quiet", unit).Run() == nil {
		t.Fatalf("%s still active after stop", unit)
	}
	if pids := w.marked(); len(pids) > 0 {
		t.Fatalf("after stop, processes of the harness still run: %v", pids)
	}
}
