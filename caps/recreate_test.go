package caps

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// notices records what Notice says during the test.
func notices(t *testing.T) *[]string {
	var said []string
	old := Notice
	Notice = func(m string) { said = append(said, m) }
	t.Cleanup(func() { Notice = old })
	return &said
}

// TestMissingSandboxFileLoadsClosed: with the agent's grants (a written
// folder, the internet) in place, its grants hold them (the control);
// with Config/sandbox.toml gone they load closed, never Link's defaults,
// the file is made again closed and it is said once; a later load says
// nothing and stays closed.
func TestMissingSandboxFileLoadsClosed(t *testing.T) {
	home := testenv.Home(t)
	mkdirs(t, filepath.Join(home, "Projects"))
	if _, err := CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	c, err := Allow(home, "ada", Grants{Write: []string{"~/Projects"}})
	if err != nil || !c.Internet.On || !written(c) {
		t.Fatalf("the control: %v %+v", err, c)
	}
	said := notices(t)
	file := Layout{Home: home}.SandboxFile("ada")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		c, err := CompileAgent(home, "ada")
		if err != nil {
			t.Fatal(err)
		}
		if c.Internet.On || written(c) {
			t.Fatalf("load %d: not closed: internet %v, folders %+v", i, c.Internet.On, c.Folders)
		}
	}
	if len(*said) != 1 || !strings.Contains((*said)[0], "sandbox.toml was missing: made again closed") {
		t.Fatalf("said %q, want it once", *said)
	}
	s, err := ReadSpecFile(file)
	if err != nil || s.Internet == nil || s.Internet.On == nil || *s.Internet.On || s.Files == nil || len(s.Files.Write) != 0 {
		t.Fatalf("the file made again: %+v %v", s, err)
	}
	if st, err := os.Lstat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", st.Mode(), err)
	}
}

// TestMissingSandboxFileClosedWhenNotRemade: where it can't be made
// again (its folder read-only), the grants load closed all the same, and
// each load says why.
func TestMissingSandboxFileClosedWhenNotRemade(t *testing.T) {
	home := testenv.Home(t)
	if _, err := CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	l := Layout{Home: home}
	if err := os.Remove(l.SandboxFile("ada")); err != nil {
		t.Fatal(err)
	}
	readOnly(t, l.ConfigDir("ada"))
	said := notices(t)
	c, err := CompileAgent(home, "ada")
	if err != nil || c.Internet.On || written(c) {
		t.Fatalf("not closed: %v %+v", err, c)
	}
	if len(*said) != 1 || !strings.Contains((*said)[0], "could not be made again") {
		t.Fatalf("said %q", *said)
	}
	if _, err := os.Lstat(l.SandboxFile("ada")); !os.IsNotExist(err) {
		t.Fatalf("the file was made: %v", err)
	}
}

// readOnly makes dir unwritable for the test: immutable as root (whom
// modes don't stop), 0500 otherwise.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() == 0 {
		if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
			t.Fatalf("chattr: %v %s", err, out)
		}
		t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
		return
	}
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
}

// TestMissingAgentFileRemade: an agent whose Config/agent.toml is gone
// stays listed, with a new ID and no harness (so no harness's layer
// joins), said once; its grants are its own file's.
func TestMissingAgentFileRemade(t *testing.T) {
	home := testenv.Home(t)
	a, err := CreateAgent(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	if err := SetHarness(home, "ada", "h"); err != nil {
		t.Fatal(err)
	}
	l := Layout{Home: home}
	if err := os.Remove(l.AgentFile("ada")); err != nil {
		t.Fatal(err)
	}
	said := notices(t)
	as, err := ListAgents(home)
	if err != nil || len(as) != 1 || as[0].Name != "ada" || as[0].ID == a.ID || len(as[0].ID) != 32 || as[0].Harness != "" {
		t.Fatalf("list: %+v %v", as, err)
	}
	b, err := LoadAgent(home, "ada")
	if err != nil || b.ID != as[0].ID {
		t.Fatalf("load: %+v %v", b, err)
	}
	if len(*said) != 1 || !strings.Contains((*said)[0], "agent.toml was missing") {
		t.Fatalf("said %q, want it once", *said)
	}
	if st, err := os.Lstat(l.AgentFile("ada")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("agent.toml: %v %v", st, err)
	}
}

func written(c *Compiled) bool {
	for _, f := range c.Folders {
		if f.Access.Write {
			return true
		}
	}
	return false
}
