package tooldef

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
)

func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"github", true}, {"my_tool-2", true},
		{"", false}, {"a/b", false}, {"a.b", false}, {"a--b", false}, {"ends-", false}, {"-starts", false},
		{"task", false}, {"file", false}, {"tool", false}, {"agent", false},
		{"memory-1234", false}, {"scheduler-x", false}, {"run-abc", false}, {"file-9", false}, {"Memory-1", false},
		{string(make([]byte, 65)), false},
	} {
		err := CheckName(c.name)
		if (err == nil) != c.ok {
			t.Errorf("CheckName(%q) = %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrName) {
			t.Errorf("CheckName(%q): %v is not ErrName", c.name, err)
		}
	}
}

func TestCheckCommandRefusesWhatIsWrittenFromTheFolderItWasAddedIn(t *testing.T) {
	for _, argv := range [][]string{
		nil, {""}, {"./server"}, {"../bin/server"}, {"node", "."}, {"node", "./index.js"}, {"node", ".."},
		{"bin/server"}, {"node", "a\x00b"},
	} {
		if err := CheckCommand(argv); err == nil {
			t.Errorf("CheckCommand(%q) accepted", argv)
		}
	}
	for _, argv := range [][]string{{"npx", "-y", "@modelcontextprotocol/server-everything"}, {"/usr/bin/node", "/opt/x/index.js", "--port=.5"}} {
		if err := CheckCommand(argv); err != nil {
			t.Errorf("CheckCommand(%q): %v", argv, err)
		}
	}
}

func TestCheckURL(t *testing.T) {
	ok := []string{"https://mcp.example.com/mcp", "http://127.0.0.1:8080/mcp", "http://localhost/mcp", "http://[::1]:9/x"}
	bad := []string{"http://example.com/mcp", "http://10.0.0.1/mcp", "ftp://x/", "https://user:pw@x/", "/relative", "https://x/#frag", "http://169.254.169.254/"}
	for _, u := range ok {
		if err := CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q): %v", u, err)
		}
	}
	for _, u := range bad {
		if err := CheckURL(u); !errors.Is(err, ErrURL) {
			t.Errorf("CheckURL(%q) = %v, want ErrURL", u, err)
		}
	}
}

func newDef(t *testing.T, name, token string) *Definition {
	t.Helper()
	v, err := secret.FromString(token)
	if err != nil {
		t.Fatal(err)
	}
	return &Definition{Name: name, Command: []string{"/usr/bin/env", "server"}, Env: map[string]*secret.Value{"API_TOKEN": v}}
}

func TestSaveLoadKeepsModesAndValues(t *testing.T) {
	home := testenv.Home(t)
	s := Store{Home: home}
	d := newDef(t, "gh", "tok-123")
	if err := s.Save(d); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{filepath.Join(home, ".lnk"): 0o700, filepath.Join(home, Folder): 0o700, s.Path("gh"): 0o600} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	got, err := s.Load("gh")
	if err != nil {
		t.Fatal(err)
	}
	defer got.Destroy()
	if !got.Env["API_TOKEN"].Equal([]byte("tok-123")) || got.Digest() != d.Digest() {
		t.Errorf("loaded definition differs: %v", got.Environ())
	}
	names, err := s.Names()
	if err != nil || len(names) != 1 || names[0] != "gh" {
		t.Errorf("Names = %v, %v", names, err)
	}
	if err := s.Remove("gh"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("gh"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Load after Remove = %v, want ErrNotFound", err)
	}
}

func TestDigestChangesWithEveryValue(t *testing.T) {
	a, b := newDef(t, "x", "one"), newDef(t, "x", "two")
	if a.Digest() == b.Digest() {
		t.Error("a replaced token left the digest the same")
	}
	c := newDef(t, "x", "one")
	c.Command = append(c.Command, "--flag")
	if a.Digest() == c.Digest() {
		t.Error("another command left the digest the same")
	}
}

func TestLoadRefusesLinksAndUnknownFields(t *testing.T) {
	home := testenv.Home(t)
	s := Store{Home: home}
	if err := s.Save(newDef(t, "ok", "v")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, Folder)
	os.WriteFile(filepath.Join(home, "elsewhere.json"), []byte(`{"name":"linked","command":["/bin/true"],"env":{}}`), 0o600)
	os.Symlink(filepath.Join(home, "elsewhere.json"), filepath.Join(dir, "linked.json"))
	if _, err := s.Load("linked"); !errors.Is(err, resolve.ErrLink) {
		t.Errorf("a definition that is a link: %v, want ErrLink", err)
	}
	os.WriteFile(filepath.Join(dir, "extra.json"), []byte(`{"name":"extra","command":["/bin/true"],"env":{},"cwd":"/tmp"}`), 0o600)
	if _, err := s.Load("extra"); !errors.Is(err, ErrField) {
		t.Errorf("a definition with another field: %v, want ErrField", err)
	}
	os.WriteFile(filepath.Join(dir, "rel.json"), []byte(`{"name":"rel","command":["node","./x.js"],"env":{}}`), 0o600)
	if _, err := s.Load("rel"); !errors.Is(err, ErrRelative) {
		t.Errorf("a definition with a relative argument: %v, want ErrRelative", err)
	}
	names, _ := s.Names()
	if len(names) != 3 { // ok, extra, rel: the link is left out
		t.Errorf("Names = %v", names)
	}
	// ~/.lnk/sandbox swapped for a link: nothing is read or written through it.
	os.Rename(filepath.Join(home, ".lnk", "sandbox"), filepath.Join(home, "moved"))
	os.Symlink(filepath.Join(home, "moved"), filepath.Join(home, ".lnk", "sandbox"))
	if _, err := s.Load("ok"); !errors.Is(err, resolve.ErrLink) {
		t.Errorf("through a linked folder: %v, want ErrLink", err)
	}
	if err := s.Save(newDef(t, "new", "v")); !errors.Is(err, resolve.ErrLink) {
		t.Errorf("saving through a linked folder: %v, want ErrLink", err)
	}
	if _, err := os.Lstat(filepath.Join(home, "moved", "tools", "new.json")); err == nil {
		t.Error("a definition was written through the link")
	}
}

func TestSnapshotTakesOnlyItsVariables(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "from-the-shell")
	t.Setenv("LANG", "C.UTF-8")
	env, err := TakeSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := env["GITHUB_TOKEN"]; ok {
		t.Error("the snapshot took a variable outside its list")
	}
	if !env["LANG"].Equal([]byte("C.UTF-8")) {
		t.Error("the snapshot missed LANG")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"name":"gh","command":["/usr/bin/gh","mcp"],"env":{"PATH":"/usr/bin"}}`))
	f.Add([]byte(`{"name":"x","command":["./a"],"env":{}}`))
	f.Add([]byte(`{"name":"x","command":["/a"],"url":"http://10.1.1.1/","env":{}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Parse(b)
		if err != nil {
			return
		}
		defer d.Destroy()
		if CheckName(d.Name) != nil || CheckCommand(d.Command) != nil {
			t.Fatalf("Parse accepted a definition its checks refuse: %q", b)
		}
		if d.URL != "" && CheckURL(d.URL) != nil {
			t.Fatalf("Parse accepted URL %q", d.URL)
		}
	})
}

func TestSharedIsKeptAndChangesTheDigest(t *testing.T) {
	s := Store{Home: testenv.Home(t)}
	d := newDef(t, "sh", "tok")
	plain := d.Digest()
	d.Shared = true
	if d.Digest() == plain {
		t.Error("a tool made shared kept its digest")
	}
	if err := s.Save(d); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load("sh")
	if err != nil {
		t.Fatal(err)
	}
	defer got.Destroy()
	if !got.Shared || got.Digest() != d.Digest() {
		t.Error("shared was not kept")
	}
}
