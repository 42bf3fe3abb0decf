package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/move/placedstate"
)

// TestAJournalLinkCannotReadIsRefused: a placing journal that is not one
// Link wrote (garbage, or a link in its place) refuses lnk agent restore
// and start of the agent, one line with the hint, and nothing is
// changed; with the journal gone, the restore runs whole, the positive
// control.
func TestAJournalLinkCannotReadIsRefused(t *testing.T) {
	lnk := testenv.Bin(t, "lnk")
	home := testenv.Home(t)
	if out, err := lnkIn(lnk, home, "agent", "create", "main").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	a, err := caps.LoadAgent(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := lnkIn(lnk, home, "agent", "backup", "main", "--local").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	jp := filepath.Join(home, ".lnk", "moving", a.ID+".placing")
	os.MkdirAll(filepath.Dir(jp), 0o700)
	for _, bad := range []string{"garbage", "link"} {
		os.Remove(jp)
		if bad == "link" {
			os.WriteFile(filepath.Join(home, "j"), []byte("{}\n"), 0o600)
			os.Symlink(filepath.Join(home, "j"), jp)
		} else {
			os.WriteFile(jp, []byte("{\"format\":\"lnk-placing/v1\",\"kind\":\"other\"}\n"), 0o600)
		}
		before := placedstate.State(t, home, "main")
		for _, args := range [][]string{{"agent", "restore", "main", "--local"}, {"agent", "start", "main"}} {
			c := lnkIn(lnk, home, args...)
			out, _ := c.CombinedOutput()
			if c.ProcessState.ExitCode() != ExitRefused || !strings.Contains(string(out), "not one Link wrote") || !strings.Contains(string(out), "hint: ") ||
				!strings.Contains(string(out), "lnk agent status main") {
				t.Errorf("%s journal, lnk %v: exit %d:\n%s", bad, args, c.ProcessState.ExitCode(), out)
			}
		}
		if after := placedstate.State(t, home, "main"); after != before {
			t.Errorf("%s journal: the agent changed:\n%s\n--- was\n%s", bad, after, before)
		}
	}
	os.Remove(jp)
	c := lnkIn(lnk, home, "agent", "restore", "main", "--local")
	out, _ := c.CombinedOutput()
	if c.ProcessState.ExitCode() != 0 || !strings.Contains(string(out), "restored agent main") {
		t.Errorf("with no journal, restore: exit %d:\n%s", c.ProcessState.ExitCode(), out)
	}
}
