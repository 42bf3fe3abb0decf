package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// agentCommands are every agent command that takes an agent's name, with
// what follows the name.
var agentCommands = [][]string{
	{"create"}, {"delete"}, {"show"}, {"show", "--permissions"},
	{"allow", "--read", "/tmp"}, {"deny", "--internet"},
	{"harness", "run", "--", "true"}, {"harness", "check"}, {"harness", "list"},
}

// refusedWithHint checks a refusal as the owner sees it: exit 3 or 4,
// nothing on stdout, one "lnk: " line saying why, no control character,
// then hints, one of which names a `lnk` command the tree has.
func refusedWithHint(t *testing.T, what string, code int, out, errs string) {
	t.Helper()
	if code != ExitRefused && code != ExitMissing {
		t.Errorf("%s: exit %d, want %d or %d:\n%s%s", what, code, ExitRefused, ExitMissing, out, errs)
		return
	}
	if out != "" {
		t.Errorf("%s: refused, yet printed %q", what, out)
	}
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "lnk: ") || len(lines) < 2 {
		t.Errorf("%s: not one reason and a hint:\n%s", what, errs)
		return
	}
	for _, r := range errs {
		if r < 0x20 && r != '\n' || r == 0x7f {
			t.Errorf("%s: a control character %#x in:\n%q", what, r, errs)
		}
	}
	root := NewRoot(new(bytes.Buffer), new(bytes.Buffer))
	named := false
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "  hint: ") {
			t.Errorf("%s: line %q is neither the reason nor a hint:\n%s", what, l, errs)
		}
		for _, m := range commandNamed.FindAllStringSubmatch(l, -1) {
			if _, err := commandPath(root, strings.Fields(m[1])); err == nil {
				named = true
			}
		}
	}
	if !named {
		t.Errorf("%s: no hint names a lnk command:\n%s", what, errs)
	}
}

// TestAgentCommandsRefuseBadNames: every agent command refuses an agent's
// name that is a path, "." or "..", a name starting with '.' (Link's own
// folders there, of which none is made an agent), empty, too long, or
// holding an escape sequence, a name that is a link to another agent's
// folder, an agent whose agent.toml is another's, and a missing agent:
// one line saying why and a hint naming a lnk command. The agent's own
// name works (lnk agent show, the positive control).
func TestAgentCommandsRefuseBadNames(t *testing.T) {
	home := testenv.Home(t)
	for _, n := range []string{"a", "b", "c"} {
		if _, err := caps.CreateAgent(home, n); err != nil {
			t.Fatal(err)
		}
	}
	agents := filepath.Join(home, "Link", "Agents")
	if err := os.Symlink(filepath.Join(agents, "a"), filepath.Join(agents, "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(agents, ".moved", "Home"), 0o700); err != nil {
		t.Fatal(err)
	}
	// The first lnk agent command moves what .moved holds to History and
	// says so: done here, so each refusal below is its command's alone.
	if code, _, errs := runLnk(t, "agent", "list"); code != 0 {
		t.Fatal(errs)
	}
	theirs, err := os.ReadFile(filepath.Join(agents, "b", "Config", "agent.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agents, "c", "Config", "agent.toml"), theirs, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := []string{"../b", "/tmp", "a/b", ".", "..", ".moved", "", "x\x1b[2Jy", strings.Repeat("x", 65), "l", "c", "nobody"}
	for _, cmd := range agentCommands {
		for _, n := range bad {
			if cmd[0] == "create" && (n == "nobody" || n == "c") {
				continue // a name create takes, or one it refuses as taken: TestAgentCommandsExitCodesAndRefusals
			}
			args := append([]string{"agent"}, cmd[0])
			rest := cmd[1:]
			if cmd[0] == "harness" {
				args, rest = append(args, cmd[1]), cmd[2:]
			}
			args = append(append(args, n), rest...)
			code, out, errs := runLnk(t, args...)
			refusedWithHint(t, strings.Join(args, " "), code, out, errs)
		}
	}
	if _, err := os.Lstat(filepath.Join(agents, ".moved", "Config")); !os.IsNotExist(err) {
		t.Fatalf("an agent was made of ~/Link/Agents/.moved: %v", err)
	}
	if code, out, errs := runLnk(t, "agent", "show", "a"); code != 0 || !strings.Contains(out, "name     a\n") {
		t.Fatalf("the agent's own name: exit %d\n%s%s", code, out, errs)
	}
}

// TestHarnessNamesRefused: --harness naming a path, a link to another
// agent's harness home, another agent's harness, a home open to others,
// and an agent naming no harness, are each refused by run, check and
// list's commands with a reason and a hint naming a lnk command; nothing
// runs and no home is made.
func TestHarnessNamesRefused(t *testing.T) {
	home := testenv.Home(t)
	for _, n := range []string{"a", "b"} {
		if _, err := caps.CreateAgent(home, n); err != nil {
			t.Fatal(err)
		}
	}
	agents := filepath.Join(home, "Link", "Agents")
	theirs := filepath.Join(agents, "b", "Harnesses", "theirs")
	loose := filepath.Join(agents, "a", "Harnesses", "loose")
	for _, d := range []string{theirs, loose} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(loose, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(theirs, filepath.Join(agents, "a", "Harnesses", "linked")); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"../../b/Harnesses/theirs", theirs, "theirs", "linked", "loose", "", ".."} {
		for _, cmd := range [][]string{{"run", "a", "--harness", h, "--", "true"}, {"check", "a", "--harness", h}} {
			args := append([]string{"agent", "harness"}, cmd...)
			code, out, errs := runLnk(t, args...)
			refusedWithHint(t, strings.Join(args, " "), code, out, errs)
		}
	}
	if _, err := os.Lstat(filepath.Join(agents, "a", "Harnesses", "theirs")); !os.IsNotExist(err) {
		t.Fatalf("a home was made for another agent's harness: %v", err)
	}
	code, out, errs := runLnk(t, "agent", "harness", "list", "a")
	if code != 0 || !strings.Contains(out, "loose") || !strings.Contains(out, "refused") {
		t.Fatalf("list: exit %d\n%s%s", code, out, errs)
	}
	// A harness's layer granting a path through a link: refused, with a
	// hint naming a lnk command, for run and check alike.
	if err := os.Symlink(home, filepath.Join(home, "lh")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".lnk", "harnesses"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".lnk", "harnesses", "bad.toml"), []byte("[files]\nread = [\""+filepath.Join(home, "lh")+"\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := caps.SetHarness(home, "a", "bad"); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"run", "check"} {
		args := []string{"agent", "harness", cmd, "a"}
		if cmd == "run" {
			args = append(args, "--", "true")
		}
		code, out, errs := runLnk(t, args...)
		refusedWithHint(t, strings.Join(args, " "), code, out, errs)
		if !strings.Contains(errs, "rule symlink") {
			t.Errorf("%v: not the layer's link refused:\n%s", args, errs)
		}
	}
	code, out, errs = runLnk(t, "agent", "harness", "run", "a", "true")
	if code != ExitUsage || !strings.Contains(errs, "hint: lnk agent harness run a -- COMMAND") {
		t.Fatalf("a command without --: exit %d\n%s%s", code, out, errs)
	}
}

// TestAgentGrantRefusalsNameACommand: each grant allow or deny refuses
// (a detour, a link, the home folder, a dot folder, Link's settings,
// another agent's folder, a harness's home, a missing folder, a folder on
// PATH, a bad host, port, command, tool name or network mode, an empty
// path) says why in one line, with a hint naming a lnk command; a tool's
// bad name is never taken for the agent's.
func TestAgentGrantRefusalsNameACommand(t *testing.T) {
	home := testenv.Home(t)
	if _, err := caps.CreateAgent(home, "a"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"p", ".config"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(home, "p"), filepath.Join(home, "lp")); err != nil {
		t.Fatal(err)
	}
	for _, g := range [][]string{
		{"allow", "--read", "~/p/../.lnk"}, {"allow", "--read", "~/lp"}, {"allow", "--write", "~"},
		{"allow", "--write", "~/.config"}, {"allow", "--read", "~/.lnk"}, {"allow", "--read", "~/Link/Agents/b"},
		{"allow", "--read", "~/Link/Agents/a/Harnesses/h"}, {"allow", "--read", "~/nope"},
		{"allow", "--write", "/usr/local/bin"}, {"allow", "--internet-host", "bad host"}, {"allow", "--port", "0"},
		{"allow", "--command", "../x"}, {"allow", "--tool", "a b"}, {"allow", "--network-mode", "weird"},
		{"allow", "--read", ""}, {"deny", "--internet=false"},
	} {
		args := append([]string{"agent", g[0], "a"}, g[1:]...)
		code, out, errs := runLnk(t, args...)
		refusedWithHint(t, strings.Join(args, " "), code, out, errs)
		if strings.Contains(errs, "shows the agents by name") {
			t.Errorf("%v: a grant's refusal taken for the agent's name:\n%s", args, errs)
		}
	}
}
