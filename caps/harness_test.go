package caps

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// harnessHome makes agent's harness home h with mode.
func harnessHome(t *testing.T, l Layout, agent, h string, mode os.FileMode) string {
	t.Helper()
	p := l.HarnessHome(agent, h)
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// folderOf returns the Folder at p in c, or nil.
func folderOf(c *Compiled, p string) *Folder {
	for i := range c.Folders {
		if c.Folders[i].Path == p {
			return &c.Folders[i]
		}
	}
	return nil
}

// TestCompileHarnessJoinsExactlyItsLayerAndHome: the agent's own harness
// (agent.toml's) joins its layer, gets its home made 0700, written, and
// is profiled <harness>-run; another harness of the agent's joins its
// own layer instead, never the agent's harness's.
func TestCompileHarnessJoinsExactlyItsLayerAndHome(t *testing.T) {
	home := testenv.Home(t)
	l := Layout{Home: home}
	if _, err := CreateAgent(home, "a"); err != nil {
		t.Fatal(err)
	}
	if err := SetHarness(home, "a", "h"); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{}
	for _, h := range []string{"h", "h2"} {
		dirs[h] = filepath.Join(home, "for-"+h)
		if err := os.Mkdir(dirs[h], 0o700); err != nil {
			t.Fatal(err)
		}
		writeT(t, l.HarnessFile(h), "[files]\nread = [\""+dirs[h]+"\"]\n")
	}
	c, err := CompileHarness(home, "a", "", "run")
	if err != nil {
		t.Fatal(err)
	}
	hh := l.HarnessHome("a", "h")
	st, err := os.Lstat(hh)
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Fatalf("the harness's home was not made 0700: %v %v", st, err)
	}
	if f := folderOf(c, hh); f == nil || !f.Access.Write || f.ID == (FileID{}) {
		t.Fatalf("the harness's home is not written, with its identity: %+v", c.Folders)
	}
	if c.HarnessHome != hh || c.Harness != "h" || c.Profile != "h-run" || c.LogName() != "a/h-run" {
		t.Fatalf("harness %q home %q profile %q log %q", c.Harness, c.HarnessHome, c.Profile, c.LogName())
	}
	if folderOf(c, dirs["h"]) == nil || folderOf(c, dirs["h2"]) != nil {
		t.Fatalf("h's sandbox: want h's folder alone: %+v", c.Folders)
	}
	harnessHome(t, l, "a", "h2", 0o700)
	c, err = CompileHarness(home, "a", "h2", "check")
	if err != nil {
		t.Fatal(err)
	}
	if folderOf(c, dirs["h2"]) == nil || folderOf(c, dirs["h"]) != nil || c.LogName() != "a/h2-check" {
		t.Fatalf("h2's sandbox: want h2's folder alone, logged a/h2-check: %+v %q", c.Folders, c.LogName())
	}
	if folderOf(c, hh) != nil {
		t.Fatalf("h2's sandbox holds h's home: %+v", c.Folders)
	}
	a, err := CompileAgent(home, "a")
	if err != nil {
		t.Fatal(err)
	}
	if a.HarnessHome != "" || a.Profile != "" || a.LogName() != "a" || folderOf(a, hh) != nil {
		t.Fatalf("the agent's own sandbox has a harness's home or profile: %+v", a)
	}
}

// TestCompileHarnessRefusals: a harness named by a path, one the agent
// has no home for (another agent's), a home that is a link, not a
// folder, or open to others, and an agent naming no harness, are each
// refused; nothing is made for a harness that is not the agent's own.
func TestCompileHarnessRefusals(t *testing.T) {
	home := testenv.Home(t)
	l := Layout{Home: home}
	for _, n := range []string{"a", "b"} {
		if _, err := CreateAgent(home, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := CompileHarness(home, "a", "", "run"); !errors.Is(err, ErrNoHarness) {
		t.Fatalf("an agent naming no harness: %v", err)
	}
	for _, bad := range []string{"../b/Harnesses/x", "/tmp", "x/y", ".."} {
		_, err := CompileHarness(home, "a", bad, "run")
		hit(t, err, ErrBadName)
	}
	_, err := CompileHarness(home, "../b", "x", "run")
	hit(t, err, ErrBadName)
	harnessHome(t, l, "b", "theirs", 0o700)
	if _, err := CompileHarness(home, "a", "theirs", "run"); !errors.Is(err, ErrNoHarness) {
		t.Fatalf("another agent's harness: %v", err)
	}
	if _, err := os.Lstat(l.HarnessHome("a", "theirs")); !os.IsNotExist(err) {
		t.Fatalf("a home was made for a harness that is not the agent's own: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(l.AgentDir("a"), "Harnesses"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(l.HarnessHome("b", "theirs"), l.HarnessHome("a", "linked")); err != nil {
		t.Fatal(err)
	}
	_, err = CompileHarness(home, "a", "linked", "run")
	hit(t, err, ErrSymlink)
	writeT(t, l.HarnessHome("a", "file"), "")
	_, err = CompileHarness(home, "a", "file", "run")
	hit(t, err, ErrSpecNotRegular)
	harnessHome(t, l, "a", "loose", 0o750)
	_, err = CompileHarness(home, "a", "loose", "run")
	hit(t, err, ErrLooseHome)
	harnessHome(t, l, "a", "tight", 0o700)
	if _, err := CompileHarness(home, "a", "tight", "run"); err != nil {
		t.Fatalf("a home of the agent's own, 0700: %v", err)
	}
	hs, err := ListHarnesses(home, "a")
	if err != nil {
		t.Fatal(err)
	}
	state := map[string]string{}
	for _, h := range hs {
		state[h.Name] = h.Refused
	}
	if len(hs) != 4 || state["tight"] != "" || state["linked"] == "" || state["loose"] == "" || state["file"] == "" {
		t.Fatalf("list: %+v", hs)
	}
}

func writeT(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}
