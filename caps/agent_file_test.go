package caps

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// TestLoadAgentRefusesWhatIsNotThisAgent: a name starting with '.' (Link's
// own folders under ~/Link/Agents) is refused and nothing is made there;
// an agent folder that is a link to another's, an agent.toml copied from
// another agent, and one whose id is 32 characters but not hex (it would
// lead the paths named by it out of their folders) are refused. The
// agent's own loads (the positive control).
func TestLoadAgentRefusesWhatIsNotThisAgent(t *testing.T) {
	home := testenv.Home(t)
	l := Layout{Home: home}
	for _, n := range []string{"a", "b"} {
		if _, err := CreateAgent(home, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadAgent(home, "a"); err != nil {
		t.Fatalf("the agent's own: %v", err)
	}
	moved := filepath.Join(l.Agents(), ".moved")
	if err := os.MkdirAll(filepath.Join(moved, "Home"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := LoadAgent(home, ".moved")
	hit(t, err, ErrBadName)
	_, err = CompileAgent(home, ".moved")
	hit(t, err, ErrBadName)
	if _, err := os.Lstat(filepath.Join(moved, "Config")); !os.IsNotExist(err) {
		t.Fatalf("an agent was made in ~/Link/Agents/.moved: %v", err)
	}
	if err := os.Symlink(l.AgentDir("a"), l.AgentDir("l")); err != nil {
		t.Fatal(err)
	}
	_, err = LoadAgent(home, "l")
	hit(t, err, ErrSymlink)
	if r, ok := err.(*Refusal); !ok || !strings.Contains(r.Hint, "lnk agent list") {
		t.Errorf("the link's hint names no command: %v", err)
	}
	own, err := os.ReadFile(l.AgentFile("a"))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := os.ReadFile(l.AgentFile("b"))
	if err != nil {
		t.Fatal(err)
	}
	writeT(t, l.AgentFile("a"), string(theirs))
	_, err = CompileAgent(home, "a")
	hit(t, err, ErrAgentFile)
	writeT(t, l.AgentFile("a"), string(own))
	a, err := LoadAgent(home, "a")
	if err != nil {
		t.Fatal(err)
	}
	writeT(t, l.AgentFile("a"), strings.Replace(string(own), a.ID, strings.Repeat("../", 10)+"xx", 1))
	_, err = LoadAgent(home, "a")
	hit(t, err, ErrAgentFile)
	writeT(t, l.AgentFile("a"), string(own))
	if _, err := LoadAgent(home, "a"); err != nil {
		t.Fatalf("its own agent.toml back: %v", err)
	}
}
