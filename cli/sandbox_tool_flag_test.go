package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/internal/testenv"
)

// lnk sandbox run with --tool given twice is refused, naming both tools
// and how to grant several (an agent), rather than silently keeping only
// the last; one --tool is granted (the control), the grants read back.
func TestSandboxRunRefusesASecondTool(t *testing.T) {
	lnkBin(t)
	testenv.Home(t)
	for _, name := range []string{"notes", "mail"} {
		if _, errOut, code := lnkRun(t, nil, "sandbox", "tool", "add", name, "--", "/bin/true"); code != 0 {
			t.Fatalf("tool add %s: %d %s", name, code, errOut)
		}
	}
	compile := func(args ...string) (map[string]bool, error) {
		var s sandboxSpec
		c := &cobra.Command{Use: "run"}
		s.bind(c)
		if err := c.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		comp, err := s.compile(c)
		if err != nil {
			return nil, err
		}
		tools := map[string]bool{}
		for n := range comp.Tools {
			tools[n] = true
		}
		return tools, nil
	}
	if tools, err := compile("--tool", "notes", "--allow", "read"); err != nil || len(tools) != 1 || !tools["notes"] {
		t.Fatalf("one --tool: %v, %v", tools, err)
	}
	tools, err := compile("--tool", "notes", "--tool", "mail")
	if CodeOf(err) != ExitUsage || !strings.Contains(err.Error(), "notes, mail") {
		t.Fatalf("two --tool: %v, %v", tools, err)
	}
	_, errOut, code := lnkRun(t, nil, "sandbox", "run", "--tool", "notes", "--tool", "mail", "--", "/bin/true")
	if code != ExitUsage || !strings.Contains(errOut, "--tool given 2 times (notes, mail)") ||
		!strings.Contains(errOut, "hint: grant each tool in a command of its own (lnk agent allow NAME --tool notes, then lnk agent allow NAME --tool mail) to an agent") {
		t.Fatalf("lnk sandbox run --tool notes --tool mail: %d %s", code, errOut)
	}
}

// lnk agent allow (and deny) with --tool given twice is refused the same
// way, nothing written; one --tool is granted (the control), read back
// from the agent's file.
func TestAgentGrantRefusesASecondTool(t *testing.T) {
	lnkBin(t)
	home := testenv.Home(t)
	for _, name := range []string{"notes", "mail"} {
		if _, errOut, code := lnkRun(t, nil, "sandbox", "tool", "add", name, "--", "/bin/true"); code != 0 {
			t.Fatalf("tool add %s: %d %s", name, code, errOut)
		}
	}
	if _, errOut, code := lnkRun(t, nil, "agent", "create", "a"); code != 0 {
		t.Fatalf("agent create: %d %s", code, errOut)
	}
	file := filepath.Join(home, "Link", "Agents", "a", "Config", "sandbox.toml")
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"allow", "deny"} {
		_, errOut, code := lnkRun(t, nil, "agent", verb, "a", "--tool", "notes", "--tool", "mail")
		if code != ExitUsage || !strings.Contains(errOut, "--tool given 2 times (notes, mail)") ||
			!strings.Contains(errOut, "lnk agent "+verb+" a --tool notes, then lnk agent "+verb+" a --tool mail") {
			t.Fatalf("lnk agent %s --tool notes --tool mail: %d %s", verb, code, errOut)
		}
		if after, _ := os.ReadFile(file); string(after) != string(before) {
			t.Fatalf("lnk agent %s refused changed sandbox.toml:\n%s", verb, after)
		}
	}
	if _, errOut, code := lnkRun(t, nil, "agent", "allow", "a", "--tool", "mail", "--allow", "send"); code != 0 {
		t.Fatalf("one --tool: %d %s", code, errOut)
	}
	after, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(after), "mail") || strings.Contains(string(after), "notes") {
		t.Fatalf("after allow --tool mail: %v\n%s", err, after)
	}
}
