package kernel

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// verifyUnit runs systemd-analyze verify on a unit file; the man page
// the unit names is checked where Link is installed (cmd/lnk's package
// test), not here.
func verifyUnit(t *testing.T, path string) (string, error) {
	t.Helper()
	out, err := exec.Command("systemd-analyze", "verify", "--man=no", path).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// TestInstalledUnitPassesSystemdVerify: the unit InstallUnit writes for a
// real lnk passes systemd-analyze verify without a word, also where lnk's
// folder has a space, %, $ and ; in its name (systemd reads those
// specially: the quoting is checked by systemd's own parser), and names
// lnk by that absolute path; the same unit for a path where no lnk is
// fails verify, so the check is one that can fail.
func TestInstalledUnitPassesSystemdVerify(t *testing.T) {
	_, err := exec.LookPath("systemd-analyze")
	testenv.Require(t, err == nil, "systemd-analyze (make deps installs the systemd package)")
	lnk := testenv.Bin(t, "lnk")
	odd := filepath.Join(t.TempDir(), `Link 100% $HOME ${HOME}; $$ bin`)
	if err := os.Mkdir(odd, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(lnk)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(odd, "lnk"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{lnk, filepath.Join(odd, "lnk")} {
		p, err := InstallUnit(t.TempDir(), "", path)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := verifyUnit(t, p); err != nil || out != "" {
			t.Errorf("unit for %q: systemd-analyze verify: %v\n%s", path, err, out)
		}
		u, _ := os.ReadFile(p)
		if !strings.Contains(string(u), "ExecStart="+systemdQuote(path)+" kernel run\n") {
			t.Errorf("the unit does not start %q:\n%s", path, u)
		}
	}

	missing := filepath.Join(t.TempDir(), "no-lnk-here")
	p, err := InstallUnit(t.TempDir(), "", missing)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := verifyUnit(t, p); err == nil || !strings.Contains(out, missing) {
		t.Errorf("a unit naming a missing lnk passed verify: %v\n%s", err, out)
	}
}

// TestInstallUnitRefusesPathsSystemdCannotStart: a path for lnk with a
// quote, a backslash, a control character or bytes that are not UTF-8
// is refused before anything is written, and systemd-analyze shows the
// refusal is systemd's own: the unit with that path fails verify.
func TestInstallUnitRefusesPathsSystemdCannotStart(t *testing.T) {
	_, err := exec.LookPath("systemd-analyze")
	testenv.Require(t, err == nil, "systemd-analyze (make deps installs the systemd package)")
	lnk := testenv.Bin(t, "lnk")
	b, err := os.ReadFile(lnk)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`Link's`, `"Link"`, `Link\bin`, "Link\tbin", "Link\xffbin"} {
		dir := filepath.Join(t.TempDir(), name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "lnk")
		os.WriteFile(path, b, 0o755)
		home := t.TempDir()
		if _, err := InstallUnit(home, "", path); !errors.Is(err, ErrUnitPath) {
			t.Errorf("%q: %v", name, err)
		}
		if _, err := os.Lstat(filepath.Join(home, ".config", "systemd")); !os.IsNotExist(err) {
			t.Errorf("%q: written before the refusal: %v", name, err)
		}
		if name == "Link\xffbin" {
			continue // systemd-analyze reads the file as UTF-8 and says so its own way
		}
		// The path quoted as well as systemd allows: \ and " escaped.
		quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%").Replace(path)
		unit := filepath.Join(t.TempDir(), UnitName)
		os.WriteFile(unit, []byte("[Service]\nExecStart=\""+quoted+"\" kernel run\n"), 0o600)
		if out, err := verifyUnit(t, unit); err == nil || !strings.Contains(out, "special characters") {
			t.Errorf("%q: systemd took the unit InstallUnit refuses: %v\n%s", name, err, out)
		}
	}
}
