package sandbox_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// auditLines counts the lines of kind in home's audit log whose reason
// holds word.
func auditLines(t *testing.T, home, kind, word string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct{ Kind, Reason string }
		if l != "" && json.Unmarshal([]byte(l), &e) == nil && e.Kind == kind && strings.Contains(e.Reason, word) {
			n++
		}
	}
	return n
}

// TestRefusalsLoggedOnce: each refusal of lnk sandbox run and check, a
// command not in [commands] and a grant a rule refuses, is one line in
// the wire's log with its reason; a run that starts logs nothing.
func TestRefusalsLoggedOnce(t *testing.T) {
	w := newWorld(t)
	if code, _, errs := lnk(t, "sandbox", "run", "--internet=false", "--", "sh", "-c", "exit 0"); code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := auditLines(t, w.home, "refuse", ""); n != 0 {
		t.Fatalf("a run that started logged %d refusals", n)
	}
	if code, _, errs := lnk(t, "sandbox", "run", "--internet=false", "--", "id"); code != 3 {
		t.Fatalf("an unlisted command: exit %d, %s", code, errs)
	}
	if n := auditLines(t, w.home, "refuse", "id is not in the sandbox's [commands]"); n != 1 {
		t.Fatalf("the unlisted command was logged %d times, want once", n)
	}
	for _, cmd := range []string{"run", "check"} {
		args := []string{"sandbox", cmd, "--write", filepath.Join(w.home, ".ssh")}
		if cmd == "run" {
			args = append(args, "--", "true")
		}
		if code, _, errs := lnk(t, args...); code != 3 {
			t.Fatalf("%s writing ~/.ssh: exit %d, %s", cmd, code, errs)
		}
	}
	if n := auditLines(t, w.home, "refuse", ".ssh"); n != 2 {
		t.Fatalf("the refused grant was logged %d times, want once for run and once for check", n)
	}
}
