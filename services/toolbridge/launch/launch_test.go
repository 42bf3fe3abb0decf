package launch

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// def is a tool definition running argv with PATH=path as its whole
// environment.
func def(t *testing.T, path string, argv ...string) *tooldef.Definition {
	v, err := secret.FromString(path)
	if err != nil {
		t.Fatal(err)
	}
	return &tooldef.Definition{Name: "t", Command: argv, Env: map[string]*secret.Value{"PATH": v}}
}

// TestBareNameOffItsOwnPATHRefused: a definition naming a bare program
// that the bridge's PATH holds but its own does not is refused, never
// found where the bridge runs; with the program's folder on its own PATH
// (the positive control) it starts.
func TestBareNameOffItsOwnPATHRefused(t *testing.T) {
	onBridge, err := exec.LookPath("true")
	if err != nil {
		t.Fatalf("the test needs true on its PATH: %v", err)
	}
	own := t.TempDir() // the definition's PATH: an empty folder
	d := def(t, own, "true")
	if cmd, err := Command(d, d.Environ()); err == nil {
		t.Fatalf("bare %q off its own PATH resolved to %s (the bridge's PATH holds %s)", "true", cmd.Path, onBridge)
	} else if pe, ok := err.(*ProgramError); !ok || !strings.Contains(err.Error(), "own PATH") || !strings.HasPrefix(pe.Hint(), "lnk sandbox tool add t -- /") {
		t.Errorf("refusal %q: want why, and a hint naming an absolute path", err)
	}

	d = def(t, own+":"+filepath.Dir(onBridge), "true", "arg")
	cmd, err := Command(d, d.Environ())
	if err != nil {
		t.Fatalf("true on its own PATH refused: %v", err)
	}
	if cmd.Path != onBridge || cmd.Args[0] != "true" || cmd.Args[1] != "arg" || cmd.Dir != "/" {
		t.Errorf("command %s %q in %s", cmd.Path, cmd.Args, cmd.Dir)
	}
	if a := cmd.SysProcAttr; a == nil || !a.Setpgid || a.Pdeathsig == 0 {
		t.Errorf("not its own process group with a parent-death signal: %+v", a)
	}
	if len(cmd.Env) != 1 || !strings.HasPrefix(cmd.Env[0], "PATH=") {
		t.Errorf("environment %q: want the definition's alone", cmd.Env)
	}
	if err := cmd.Run(); err != nil {
		t.Errorf("running it: %v", err)
	}
}

// TestResolve: an absolute path is itself; a relative path, an empty
// name, a relative PATH entry, a folder and a file without an execute
// bit are never taken.
func TestResolve(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "prog"), []byte("#!/bin/sh\n"), 0o755)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	for _, c := range []struct{ name, path, want string }{
		{"/bin/sh", "", "/bin/sh"},
		{"prog", dir, filepath.Join(dir, "prog")},
		{"prog", "rel:" + dir, filepath.Join(dir, "prog")},
		{"./prog", dir, ""},
		{"sub/prog", dir, ""},
		{"", dir, ""},
		{"plain", dir, ""},
		{"sub", dir, ""},
		{"prog", "", ""},
	} {
		got, err := Resolve(c.name, c.path)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", c.name, c.path, got, err, c.want)
		}
	}
}
