package grants_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/filetool/grants"
)

// agent makes agent ada under a test HOME with g allowed on top of Link's
// defaults (work/ in its Home written, the internet on).
func agent(t *testing.T, g *caps.Grants) (home string, c *caps.Compiled) {
	t.Helper()
	home = testenv.Home(t)
	if _, err := caps.CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(home, "Link", "Agents", "ada", "Home", "notes"), 0o700)
	if g != nil {
		if _, err := caps.Allow(home, "ada", *g); err != nil {
			t.Fatal(err)
		}
	}
	c, err := caps.CompileAgent(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	return home, c
}

// TestForAgentKeepsOnlyTheFilesFolder: of an agent's grants, the file
// tool's sandbox keeps its Home read, the folders of it written, and its
// instructions, skills and conversations read — not a folder outside
// Home, the internet, a tool or a program — and apply is told the same.
func TestForAgentKeepsOnlyTheFilesFolder(t *testing.T) {
	outside := t.TempDir()
	on := true
	home, c := agent(t, &caps.Grants{Write: []string{"notes"}, Read: []string{outside}, Internet: &on,
		Tool: "github", Commands: []string{"python3"}})
	own := filepath.Join(c.AgentDir, "Agent")
	for _, d := range []string{"instructions", "chats"} {
		os.MkdirAll(filepath.Join(own, d), 0o700)
	}
	os.Remove(filepath.Join(own, "skills"))                                // made empty by CreateAgent
	if err := os.Symlink(home, filepath.Join(own, "skills")); err != nil { // a link: never bound
		t.Fatal(err)
	}
	if len(c.Folders) < 3 || !c.Internet.On || len(c.Tools) == 0 {
		t.Fatalf("the agent's grants are not what the test set: %+v", c)
	}
	tool := "/opt/lnk/lnk-file-tool"
	s, err := grants.ForAgent(c, tool)
	if err != nil {
		t.Fatal(err)
	}
	g := s.Grants
	if g.Internet.On || len(g.Tools) != 0 || len(g.Commands) != 0 || g.NetworkMode != "" || len(g.LocalhostPorts)+len(g.LANHosts)+len(g.BrowserHosts) != 0 {
		t.Fatalf("the file tool's sandbox kept a network, tool or program grant: %+v", g)
	}
	var got []string
	for _, f := range g.Folders {
		got = append(got, strings.TrimPrefix(f.Path, c.AgentDir+"/")+":"+map[bool]string{true: "w", false: "r"}[f.Access.Write])
	}
	slices.Sort(got)
	want := []string{"Agent/chats:r", "Agent/instructions:r", "Home/notes:w", "Home/work:w", "Home:r"}
	if !slices.Equal(got, want) {
		t.Fatalf("folders %v, want %v", got, want)
	}
	for _, r := range g.ReadOnly {
		if !strings.HasPrefix(r, c.FilesDir+"/") {
			t.Fatalf("a read-only path outside Home: %s", r)
		}
	}
	argv := strings.Join(s.Argv, " ")
	wantArgv := tool + " apply --files " + c.FilesDir + " --agent-folder " + own
	if !strings.HasPrefix(argv, wantArgv+" ") || !strings.Contains(argv, "--write work") || !strings.Contains(argv, "--write notes") {
		t.Fatalf("argv %q", argv)
	}
	if !slices.Equal(s.Write, []string{"notes", "work"}) && !slices.Equal(s.Write, []string{"work", "notes"}) {
		t.Fatalf("write %v", s.Write)
	}
}

// TestForAgentWithoutAFileGrant: an agent whose grants write no folder of
// its Home is refused, naming the command that would allow it.
func TestForAgentWithoutAFileGrant(t *testing.T) {
	home, _ := agent(t, nil)
	if _, err := caps.Deny(home, "ada", caps.Grants{Write: []string{"work"}}); err != nil {
		t.Fatal(err)
	}
	c, err := caps.CompileAgent(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	_, err = grants.ForAgent(c, "/opt/lnk/lnk-file-tool")
	var no *grants.NoFileGrantError
	if !errors.Is(err, grants.ErrNoFileGrant) || !errors.As(err, &no) || no.Hint() != "lnk agent allow ada --write work" {
		t.Fatalf("an agent writing nothing of its Home: %v", err)
	}
	if _, err := grants.ForAgent(&caps.Compiled{Home: home}, "/opt/lnk/lnk-file-tool"); err == nil {
		t.Fatal("grants without an agent were taken")
	}
}

// TestForAgentKeepsNestedRepositories: a repository allow --write found
// in a written folder of Home stays read-only in the file tool's
// sandbox, with the folder holding it pinned, as in the agent's.
func TestForAgentKeepsNestedRepositories(t *testing.T) {
	home := testenv.Home(t)
	if _, err := caps.CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(home, "Link", "Agents", "ada", "Home", "notes", "site")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	c, err := caps.Allow(home, "ada", caps.Grants{Write: []string{"notes"}})
	if err != nil || len(c.NestedReadOnly) != 1 || len(c.Pinned) != 1 {
		t.Fatalf("the agent's grants: %v %+v %+v", err, c.NestedReadOnly, c.Pinned)
	}
	s, err := grants.ForAgent(c, "/opt/lnk/lnk-file-tool")
	if err != nil {
		t.Fatal(err)
	}
	g := s.Grants
	if len(g.NestedReadOnly) != 1 || g.NestedReadOnly[0] != c.NestedReadOnly[0] || len(g.Pinned) != 1 || g.Pinned[0] != c.Pinned[0] {
		t.Fatalf("file tool's sandbox: nested %+v pinned %+v", g.NestedReadOnly, g.Pinned)
	}
}
