package cli

import (
	"testing"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/internal/testenv"
)

// --ask none on lnk sandbox run is the same grant as on lnk agent allow:
// every call of the tool goes through without asking; any other value is
// refused with the usage.
func TestSandboxRunAskNone(t *testing.T) {
	lnkBin(t)
	testenv.Home(t)
	if _, errOut, code := lnkRun(t, nil, "sandbox", "tool", "add", "notes", "--", "/bin/true"); code != 0 {
		t.Fatalf("tool add: %d %s", code, errOut)
	}
	compile := func(args ...string) (bool, error) {
		var s sandboxSpec
		c := &cobra.Command{Use: "run"}
		s.bind(c)
		if err := c.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		comp, err := s.compile(c)
		if err != nil {
			return false, err
		}
		return comp.Tools["notes"].AskNone, nil
	}
	if none, err := compile("--tool", "notes", "--ask", "none"); err != nil || !none {
		t.Fatalf("--ask none: ask none %v, %v", none, err)
	}
	if none, err := compile("--tool", "notes", "--allow", "read"); err != nil || none {
		t.Fatalf("without --ask: ask none %v, %v", none, err)
	}
	if _, err := compile("--tool", "notes", "--ask", "always"); CodeOf(err) != ExitUsage {
		t.Fatalf("--ask always: %v", err)
	}
}
