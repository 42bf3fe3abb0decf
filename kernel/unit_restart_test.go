package kernel

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// TestUnitRestartsACrashedKernelAndVerifies: the unit lnk kernel install
// writes restarts a kernel that died (Restart=on-failure: SIGKILL and a
// crash count, a stop does not), and systemd-analyze verify finds
// nothing in it; the control, a bad Restart= line, it reports.
// (--man=no: lnk's man page is not installed where tests run.)
func TestUnitRestartsACrashedKernelAndVerifies(t *testing.T) {
	lnk := testenv.Bin(t, "lnk")
	unit := Unit(lnk)
	for _, want := range []string{"\nRestart=on-failure\n", "\nExecStart=\"" + lnk + "\" kernel run\n"} {
		if !strings.Contains(unit, want) {
			t.Fatalf("the unit lacks %q:\n%s", want, unit)
		}
	}
	sa, err := exec.LookPath("systemd-analyze")
	testenv.Require(t, err == nil, "systemd-analyze")
	verify := func(text string) string {
		dir := t.TempDir()
		p := filepath.Join(dir, UnitName)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sa, "verify", "--man=no", p)
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out) + err.Error()
		}
		return string(out)
	}
	if out := verify(unit); out != "" {
		t.Fatalf("systemd-analyze verify:\n%s", out)
	}
	if out := verify(strings.Replace(unit, "Restart=on-failure", "Restart=sometimes", 1)); !strings.Contains(out, "Restart") && !strings.Contains(out, "restart") {
		t.Fatalf("a bad Restart= passed verify: %q", out)
	}
}
