package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// TestMissingConfigFilesCLI: with Config/agent.toml and sandbox.toml
// gone, lnk agent list still lists the agent and says once that both
// were made again; show --permissions then has the internet off, where
// before it was on (the control).
func TestMissingConfigFilesCLI(t *testing.T) {
	home := testenv.Home(t)
	if code, _, errs := runLnk(t, "agent", "create", "ada"); code != ExitOK {
		t.Fatal(errs)
	}
	_, out, _ := runLnk(t, "agent", "show", "ada", "--permissions")
	if !strings.Contains(lineOf(out, "internet"), "any host") {
		t.Fatalf("the control: %s", out)
	}
	l := caps.Layout{Home: home}
	for _, f := range []string{l.AgentFile("ada"), l.SandboxFile("ada")} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runLnk(t, "agent", "list")
	if code != ExitOK || !strings.Contains(out, "ada") || strings.Count(errs, "agent.toml was missing") != 1 {
		t.Fatalf("list: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runLnk(t, "agent", "show", "ada", "--permissions")
	if code != ExitOK || strings.Count(errs, "sandbox.toml was missing") != 1 || !strings.Contains(lineOf(out, "internet"), "off") {
		t.Fatalf("show: exit %d\n%s%s", code, out, errs)
	}
	if strings.Contains(out, "files write") {
		t.Fatalf("a folder written after the file went:\n%s", out)
	}
	code, _, errs = runLnk(t, "agent", "show", "ada", "--permissions")
	if code != ExitOK || errs != "" {
		t.Fatalf("said again: %s", errs)
	}
}

// TestAllowWriteListsNestedRepositories: allow --write names the
// repositories it found in the folder, kept read-only; --write-git names
// none.
func TestAllowWriteListsNestedRepositories(t *testing.T) {
	home := testenv.Home(t)
	repo := filepath.Join(home, "Projects", "site")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runLnk(t, "agent", "create", "ada"); code != ExitOK {
		t.Fatal(errs)
	}
	code, out, errs := runLnk(t, "agent", "allow", "ada", "--write", "~/Projects")
	if code != ExitOK || !strings.Contains(out, "kept read-only inside it") || !strings.Contains(out, "  "+filepath.Join(repo, ".git")) {
		t.Fatalf("allow --write: exit %d\n%s%s", code, out, errs)
	}
	code, out, errs = runLnk(t, "agent", "allow", "ada", "--write-git", "~/Projects")
	if code != ExitOK || strings.Contains(out, filepath.Join(repo, ".git")) {
		t.Fatalf("allow --write-git: exit %d\n%s%s", code, out, errs)
	}
	c, err := caps.CompileAgent(home, "ada")
	if err != nil || len(c.NestedReadOnly) != 0 {
		t.Fatalf("after --write-git: %v %+v", err, c.NestedReadOnly)
	}
}

func lineOf(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix+" ") {
			return l
		}
	}
	return ""
}
