package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

func runLnk(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestAgentCommandsExitCodesAndRefusals: each command's exit code, and a
// refusal as one "lnk: " line naming the rule, then its hint.
func TestAgentCommandsExitCodesAndRefusals(t *testing.T) {
	home := testenv.Home(t)
	os.MkdirAll(filepath.Join(home, "Projects", "site"), 0o700)
	for _, tc := range []struct {
		args []string
		code int
		want string // in stdout or stderr
	}{
		{[]string{"agent", "create", "demo"}, ExitOK, "made agent demo"},
		{[]string{"agent", "create", "demo"}, ExitRefused, "rule agent-exists"},
		{[]string{"agent", "create", "a/b"}, ExitRefused, "rule bad-name"},
		{[]string{"agent", "allow", "demo", "--write", "~/Projects/site", "--internet-host", "api.example.com"}, ExitOK, "allow: done"},
		{[]string{"agent", "allow", "demo", "--write", "~/.ssh"}, ExitRefused, "rule dot-folder"},
		{[]string{"agent", "allow", "demo", "--write", "~"}, ExitRefused, "hint: grant a folder inside it, e.g. lnk agent allow demo --write"},
		{[]string{"agent", "allow", "demo", "--port", "*"}, ExitRefused, "hint: lnk agent allow demo --network-mode host --port '*'"},
		{[]string{"agent", "allow", "demo", "--read", "~/Projects/../.lnk"}, ExitRefused, "rule dot-dot"},
		{[]string{"agent", "allow", "demo", "--tool", "file"}, ExitRefused, "rule namespace-name"},
		{[]string{"agent", "allow", "demo", "--bogus"}, ExitUsage, "unknown flag"},
		{[]string{"agent", "allow", "demo"}, ExitUsage, "nothing to allow"},
		{[]string{"agent", "allow", "demo", "--tool", "gh", "--ask", "sometimes"}, ExitUsage, `--ask takes "none"`},
		{[]string{"agent", "allow", "nope", "--read", "~"}, ExitMissing, "no such agent"},
		{[]string{"agent", "show", "nope", "--permissions"}, ExitMissing, "hint: lnk agent create nope makes it"},
		{[]string{"agent", "deny", "demo", "--internet-host", "api.example.com"}, ExitOK, "deny: done"},
		{[]string{"agent", "show", "demo", "--permissions"}, ExitOK, "files write"},
		{[]string{"agent", "list"}, ExitOK, "demo"},
	} {
		code, out, errs := runLnk(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("lnk %s: exit %d, want %d, and %q in:\n%s%s", strings.Join(tc.args, " "), code, tc.code, tc.want, out, errs)
		}
		if code != ExitOK {
			lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
			if !strings.HasPrefix(lines[0], "lnk: ") || lines[0] != strings.ToLower(lines[0][:6])+lines[0][6:] {
				t.Errorf("lnk %s: first line %q", strings.Join(tc.args, " "), lines[0])
			}
			for _, l := range lines[1:] {
				if !strings.HasPrefix(l, "  hint: ") {
					t.Errorf("lnk %s: line %q is neither the reason nor a hint", strings.Join(tc.args, " "), l)
				}
			}
		}
	}
}

// TestAgentShowPermissionsJSON: every line has whose and route.
func TestAgentShowPermissionsJSON(t *testing.T) {
	testenv.Home(t)
	if code, _, errs := runLnk(t, "agent", "create", "j"); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := runLnk(t, "agent", "show", "j", "--permissions", "--json")
	if code != 0 {
		t.Fatal(errs)
	}
	var lines []struct{ Grant, Value, Whose, Route string }
	if err := json.Unmarshal([]byte(out), &lines); err != nil || len(lines) == 0 {
		t.Fatalf("%v: %s", err, out)
	}
	for _, l := range lines {
		if l.Grant == "" || l.Whose == "" || l.Route == "" {
			t.Fatalf("incomplete line %+v", l)
		}
	}
	code, out, _ = runLnk(t, "agent", "list", "--json")
	var as []struct{ ID, Name string }
	if code != 0 || json.Unmarshal([]byte(out), &as) != nil || len(as) != 1 || as[0].Name != "j" || len(as[0].ID) != 32 {
		t.Fatalf("list --json: %s", out)
	}
	if code, out, _ := runLnk(t, "agent", "delete", "j"); code != 0 || !strings.Contains(out, filepath.Join("Link", "History", "Agents")) {
		t.Fatalf("delete: %s", out)
	}
}
