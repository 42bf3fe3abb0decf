package cli

import (
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
		!strings.Contains(errOut, "hint: grant each tool to an agent (lnk agent allow NAME --tool notes, then lnk agent allow NAME --tool mail)") {
		t.Fatalf("lnk sandbox run --tool notes --tool mail: %d %s", code, errOut)
	}
}
