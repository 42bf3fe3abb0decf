package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// TestAgentCommandsKeepHistory: an `lnk agent` command moves what an
// older Link kept in ~/Link/Agents/.moved to History and sweeps History
// with machine.toml's keep_moved: an entry past it goes, a newer one and
// a name Link doesn't make stay; the deployment's line is kept in
// machine.toml, which the command made whole.
func TestAgentCommandsKeepHistory(t *testing.T) {
	home := testenv.Home(t)
	l := caps.Layout{Home: home}
	os.MkdirAll(l.Settings(), 0o700)
	os.WriteFile(filepath.Join(l.Settings(), "machine.toml"), []byte("keep_moved = \"2d\"\n"), 0o600)
	stamp := func(ago time.Duration) string {
		return time.Now().Add(-ago).UTC().Format("20060102T150405.000000000")
	}
	old := "gone-0123abcd-" + stamp(3*24*time.Hour)
	recent := "kept-0123abcd-" + stamp(24*time.Hour)
	for _, d := range []string{old + "/Home", recent + "/Home", "mine/Home"} {
		os.MkdirAll(filepath.Join(l.HistoryAgents(), d), 0o700)
	}
	os.Chmod(l.History(), 0o700)
	os.MkdirAll(filepath.Join(l.Agents(), ".moved", "legacy", "Home"), 0o700)
	code, _, errs := runLnk(t, "agent", "list")
	if code != 0 || !strings.Contains(errs, "moved 1 folder") {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
	ents, _ := os.ReadDir(l.HistoryAgents())
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	all := strings.Join(got, " ")
	if len(got) != 3 || strings.Contains(all, old) || !strings.Contains(all, recent) || !strings.Contains(all, "mine") || !strings.Contains(all, "legacy-") {
		t.Fatalf("history holds %v", got)
	}
	if _, err := os.Lstat(filepath.Join(l.Agents(), ".moved")); !os.IsNotExist(err) {
		t.Fatalf(".moved is still there: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(l.Settings(), "machine.toml"))
	if !strings.HasPrefix(string(b), "keep_moved = \"2d\"\nid = ") {
		t.Fatalf("machine.toml: %q", b)
	}
}

// TestMalformedMachineFileRefusesAgentCommands: what machine.toml allows
// can't be known, so every `lnk agent` command refuses, with a hint; once
// fixed, the same command runs, and `lnk machine show --json` reads back
// what the file says.
func TestMalformedMachineFileRefusesAgentCommands(t *testing.T) {
	home := testenv.Home(t)
	path := filepath.Join(home, ".lnk", "machine.toml")
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte("unsandboxed = false\nshared_harnes = true\n"), 0o600)
	code, out, errs := runLnk(t, "agent", "create", "a")
	if code != ExitRefused || !strings.Contains(errs, "unknown key") || !strings.Contains(errs, "hint: edit ~/.lnk/machine.toml") || strings.Count(errs, "\n") != 2 {
		t.Fatalf("code %d, out %q, err %q", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(home, "Link", "Agents", "a")); !os.IsNotExist(err) {
		t.Fatalf("the refused command made the agent: %v", err)
	}
	if code, _, _ := runLnk(t, "machine", "show"); code != ExitRefused {
		t.Fatalf("machine show of a malformed file: %d", code)
	}
	os.WriteFile(path, []byte("unsandboxed = false\nshared_harness = true\nname = \"box\"\n"), 0o600)
	if code, _, errs := runLnk(t, "agent", "create", "a"); code != 0 {
		t.Fatalf("after the fix: %d %q", code, errs)
	}
	code, out, _ = runLnk(t, "machine", "show", "--json")
	var m map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
		t.Fatalf("show --json: %d %q", code, out)
	}
	if m["unsandboxed"] != false || m["shared_harness"] != true || m["shared_bridge"] != false || m["name"] != "box" || m["keep_moved_seconds"] != float64(30*24*3600) || len(m["id"].(string)) != 32 {
		t.Fatalf("show --json: %v", m)
	}
	if code, out, _ := runLnk(t, "machine", "show"); code != 0 || !strings.Contains(out, "refused: no agent runs without a sandbox") {
		t.Fatalf("show: %d %q", code, out)
	}
}
