package caps

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

// TestCreateAgentModes: folders 0700, files 0600, a 128-bit ID, owned by
// the user running it (run again as an unprivileged user by
// scripts/test-as-user.sh).
func TestCreateAgentModes(t *testing.T) {
	home := testenv.Home(t)
	a, err := CreateAgent(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(a.ID) {
		t.Fatalf("id %q", a.ID)
	}
	b, _ := CreateAgent(home, "second")
	if b.ID == a.ID {
		t.Fatal("two agents, one id")
	}
	l := Layout{Home: home}
	for p, mode := range map[string]os.FileMode{
		l.Link(): 0o700 | os.ModeDir, l.Agents(): 0o700 | os.ModeDir, l.AgentDir("main"): 0o700 | os.ModeDir,
		l.FilesDir("main"): 0o700 | os.ModeDir, filepath.Join(l.AgentDir("main"), "Agent"): 0o700 | os.ModeDir,
		l.ConfigDir("main"): 0o700 | os.ModeDir, l.AgentFile("main"): 0o600, l.SandboxFile("main"): 0o600,
		l.OwnDir("main") + "/instructions": 0o700 | os.ModeDir, l.OwnDir("main") + "/skills": 0o700 | os.ModeDir,
		l.OwnDir("main") + "/chats": 0o700 | os.ModeDir, l.OwnDir("main") + "/memory": 0o700 | os.ModeDir,
		l.OwnDir("main") + "/schedule": 0o700 | os.ModeDir,
	} {
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode() != mode {
			t.Errorf("%s: mode %v, want %v", p, st.Mode(), mode)
		}
		if uid := st.Sys().(*syscall.Stat_t).Uid; int(uid) != os.Getuid() {
			t.Errorf("%s: owner %d, want %d", p, uid, os.Getuid())
		}
	}
	got, err := LoadAgent(home, "main")
	if err != nil || *got != *a {
		t.Fatalf("load: %+v %v, want %+v", got, err, a)
	}
}

func TestListAndDeleteAgent(t *testing.T) {
	home := testenv.Home(t)
	for _, n := range []string{"b", "a"} {
		if _, err := CreateAgent(home, n); err != nil {
			t.Fatal(err)
		}
	}
	as, err := ListAgents(home)
	if err != nil || len(as) != 2 || as[0].Name != "a" || as[1].Name != "b" {
		t.Fatalf("list: %+v %v", as, err)
	}
	os.WriteFile(filepath.Join(Layout{home}.FilesDir("a"), "note"), []byte("kept"), 0o600)
	dest, err := DeleteAgent(home, "a")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(dest) != (Layout{home}).HistoryAgents() {
		t.Fatalf("moved to %s", dest)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "Home", "note")); err != nil || string(b) != "kept" {
		t.Fatalf("the files did not move with it: %v", err)
	}
	if _, err := LoadAgent(home, "a"); !errors.Is(err, ErrNoAgent) {
		t.Fatalf("after delete: %v", err)
	}
	if _, err := DeleteAgent(home, "a"); !errors.Is(err, ErrNoAgent) {
		t.Fatalf("delete twice: %v", err)
	}
	if _, err := CreateAgent(home, "a"); err != nil {
		t.Fatalf("a name is free again after delete: %v", err)
	}
}

// TestAllowDenyWritesAtomicallyAndNothingOnRefusal.
func TestAllowDenyWritesAtomicallyAndNothingOnRefusal(t *testing.T) {
	home := testenv.Home(t)
	CreateAgent(home, "w")
	l := Layout{Home: home}
	os.MkdirAll(filepath.Join(home, "P"), 0o700)
	if _, err := Allow(home, "w", Grants{Write: []string{"~/P"}, InternetHosts: []string{"API.example.com"}, Ports: []string{"8080"}}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(l.SandboxFile("w"))
	var st1 unix.Stat_t
	unix.Stat(l.SandboxFile("w"), &st1)
	for _, g := range []Grants{
		{Write: []string{"~/.ssh"}},
		{Read: []string{"~/Link/Agents/w/Config"}},
		{Ports: []string{"*"}},
		{Tool: "memory-" + "00000000000000000000000000000000"},
		{Write: []string{"~/P/../.ssh"}},
		{Read: []string{"~/P\x00"}},
	} {
		if _, err := Allow(home, "w", g); err == nil {
			t.Fatalf("%+v was allowed", g)
		}
	}
	after, _ := os.ReadFile(l.SandboxFile("w"))
	var st2 unix.Stat_t
	unix.Stat(l.SandboxFile("w"), &st2)
	if !bytes.Equal(before, after) || st1.Ino != st2.Ino {
		t.Fatal("a refusal wrote the spec")
	}
	if st2.Mode&0o777 != 0o600 {
		t.Fatalf("mode %o", st2.Mode&0o777)
	}
	ents, _ := os.ReadDir(l.ConfigDir("w"))
	if len(ents) != 2 {
		t.Fatalf("temp files left: %v", ents)
	}
	c, err := Deny(home, "w", Grants{InternetHosts: []string{"api.example.com"}, Ports: []string{"8080"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Internet.Hosts) != 0 || len(c.LocalhostPorts) != 0 || !c.Internet.On {
		t.Fatalf("after deny: %+v", c.Internet)
	}
	if !has(pathsOf(c.Folders), filepath.Join(home, "P")) || !has(pathsOf(c.Folders), filepath.Join(l.FilesDir("w"), "work")) {
		t.Fatalf("folders after deny: %+v", c.Folders)
	}
}

func pathsOf(fs []Folder) []string {
	var ps []string
	for _, f := range fs {
		ps = append(ps, f.Path)
	}
	return ps
}

// TestSpecFileThatIsALinkOrNotRegular: reading or writing a sandbox.toml
// that is a link, behind a link, or a FIFO is refused, and nothing is
// written through it.
func TestSpecFileThatIsALinkOrNotRegular(t *testing.T) {
	home := testenv.Home(t)
	CreateAgent(home, "s")
	l := Layout{Home: home}
	target := filepath.Join(home, "elsewhere.toml")
	os.WriteFile(target, []byte("[files]\n"), 0o644)
	os.Remove(l.SandboxFile("s"))
	os.Symlink(target, l.SandboxFile("s"))
	_, err := CompileAgent(home, "s")
	hit(t, err, ErrSpecLink)
	_, err = Allow(home, "s", Grants{InternetHosts: []string{"x.com"}})
	hit(t, err, ErrSpecLink)
	if b, _ := os.ReadFile(target); string(b) != "[files]\n" {
		t.Fatal("wrote through the link")
	}
	os.Remove(l.SandboxFile("s"))
	if err := unix.Mkfifo(l.SandboxFile("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = CompileAgent(home, "s")
	hit(t, err, ErrSpecNotRegular)
	_, err = CompileFile(home, "", l.SandboxFile("s"))
	hit(t, err, ErrSpecNotRegular)
	os.Remove(l.SandboxFile("s"))
	if _, err := CompileAgent(home, "s"); err != nil {
		t.Fatalf("a missing sandbox.toml loads (closed): %v", err)
	}
	// A folder on the way that is a link.
	real := filepath.Join(home, "specs")
	os.Mkdir(real, 0o700)
	os.WriteFile(filepath.Join(real, "x.toml"), []byte("[files]\n"), 0o600)
	os.Symlink(real, filepath.Join(home, "specs-link"))
	_, err = CompileFile(home, "", filepath.Join(home, "specs-link", "x.toml"))
	hit(t, err, ErrSpecLink)
}

// TestDenyHeldByHarness: a deny that the harness's layer still grants
// fails, naming it and its file; the harness's grants join the agent's.
func TestDenyHeldByHarness(t *testing.T) {
	home := testenv.Home(t)
	CreateAgent(home, "h")
	l := Layout{Home: home}
	os.MkdirAll(filepath.Dir(l.HarnessFile("hx")), 0o700)
	os.WriteFile(l.HarnessFile("hx"), []byte("[internet]\nhosts = [\"pkg.example.com\"]\n[localhost]\nports = [18789]\n"), 0o600)
	if err := SetHarness(home, "h", "hx"); err != nil {
		t.Fatal(err)
	}
	if _, err := Allow(home, "h", Grants{InternetHosts: []string{"pkg.example.com"}, Ports: []string{"3000"}}); err != nil {
		t.Fatal(err)
	}
	lines, c, err := Permissions(home, "h")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.LocalhostPorts) != 2 {
		t.Fatalf("ports %v", c.LocalhostPorts)
	}
	whose := map[string]string{}
	for _, ln := range lines {
		whose[ln.Grant+" "+ln.Value] = ln.Whose
		if ln.Route == "" {
			t.Fatalf("line without a route: %+v", ln)
		}
	}
	if whose["localhost port 18789"] != "harness hx" || whose["localhost port 3000"] != "agent" ||
		whose["internet host pkg.example.com"] != "agent, harness hx" {
		t.Fatalf("whose: %v", whose)
	}
	_, err = Deny(home, "h", Grants{InternetHosts: []string{"pkg.example.com"}})
	hit(t, err, ErrHeldByHarness)
	if msg := err.Error(); !bytes.Contains([]byte(msg), []byte("--internet-host pkg.example.com")) || !bytes.Contains([]byte(msg), []byte(l.HarnessFile("hx"))) {
		t.Fatalf("refusal does not name the grant and its file: %s", msg)
	}
	// Its hint names the file to change, not a command that does not exist
	// (cli's TestEveryCommandNamedExists walks every lnk … named).
	var r *Refusal
	if !errors.As(err, &r) || !strings.Contains(r.Hint, l.HarnessFile("hx")) || strings.Contains(r.Hint, "lnk ") {
		t.Fatalf("hint: %q", r.Hint)
	}
	if _, err := Deny(home, "h", Grants{Ports: []string{"3000"}}); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentAllowsKeepEveryChange: allows at once, each adding its
// own host, all land (the Config folder's flock serializes them).
func TestConcurrentAllowsKeepEveryChange(t *testing.T) {
	home := testenv.Home(t)
	CreateAgent(home, "c")
	const n = 8
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			_, err := Allow(home, "c", Grants{InternetHosts: []string{"h" + string(rune('a'+i)) + ".example.com"}})
			errs <- err
		}(i)
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	c, err := CompileAgent(home, "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Internet.Hosts) != n {
		t.Fatalf("%d of %d hosts kept: %v", len(c.Internet.Hosts), n, c.Internet.Hosts)
	}
}

// TestHandEditedSpecRefusedByLine: a sandbox.toml edited by hand with an
// unknown key is refused at load, naming file, line and key, and allow
// writes nothing over it.
func TestHandEditedSpecRefusedByLine(t *testing.T) {
	home := testenv.Home(t)
	CreateAgent(home, "e")
	l := Layout{Home: home}
	bad := []byte("[files]\nread = [\"~\"]\nwrites = [\"~/x\"]\n")
	os.WriteFile(l.SandboxFile("e"), bad, 0o600)
	_, err := CompileAgent(home, "e")
	hit(t, err, ErrSpecUnknownKey)
	if want := l.SandboxFile("e") + ":3: key files.writes: unknown key"; err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
	if _, err := Allow(home, "e", Grants{Read: []string{"~"}}); err == nil {
		t.Fatal("allow over a bad spec")
	}
	if b, _ := os.ReadFile(l.SandboxFile("e")); !bytes.Equal(b, bad) {
		t.Fatal("the bad spec was overwritten")
	}
}

// TestDenyTheDefaultWrite: denying work/ (the default write grant) keeps
// it denied after the spec is read again; a read grant alone keeps it.
func TestDenyTheDefaultWrite(t *testing.T) {
	home := testenv.Home(t)
	CreateAgent(home, "dw")
	work := filepath.Join(Layout{Home: home}.FilesDir("dw"), "work")
	if _, err := Allow(home, "dw", Grants{Read: []string{"/usr"}}); err != nil {
		t.Fatal(err)
	}
	c, _ := CompileAgent(home, "dw")
	if !has(pathsOf(c.Folders), work) {
		t.Fatalf("a read grant dropped the default write: %+v", c.Folders)
	}
	if _, err := Deny(home, "dw", Grants{Write: []string{"work"}}); err != nil {
		t.Fatal(err)
	}
	c, err := CompileAgent(home, "dw")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range c.Folders {
		if f.Access.Write {
			t.Fatalf("still written after deny: %+v", c.Folders)
		}
	}
}
