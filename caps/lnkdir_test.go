package caps

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// withExecutable makes lnkDir see exe (or err) for the test's length.
func withExecutable(t *testing.T, exe string, err error) {
	old := executable
	executable = func() (string, error) { return exe, err }
	t.Cleanup(func() { executable = old })
}

// TestCompileRefusedWhenLnkFolderUnknown: where the running program's
// path cannot be learned, the rule against writing lnk's own folder
// cannot be checked, and the compile is refused rather than run without
// it. The positive control: with lnk's path known, a written grant of
// its folder is refused by that rule and one elsewhere compiles.
func TestCompileRefusedWhenLnkFolderUnknown(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin, work := filepath.Join(home, "opt", "link"), filepath.Join(home, "work")
	for _, d := range []string{bin, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "lnk"), nil, 0o700); err != nil {
		t.Fatal(err)
	}

	withExecutable(t, "", errors.New("readlink /proc/self/exe: no such file or directory"))
	_, err = CompileFlags(home, home, Grants{Write: []string{work}})
	if !errors.Is(err, ErrLinkOwn) {
		t.Fatalf("compile with lnk's folder unknown: got %v, want a refusal by rule %s", err, ErrLinkOwn.Rule)
	}
	r, _ := err.(*Refusal)
	if r == nil || r.Hint == "" {
		t.Fatalf("the refusal %#v carries no hint", err)
	}

	withExecutable(t, filepath.Join(bin, "lnk"), nil)
	if _, err := CompileFlags(home, home, Grants{Write: []string{bin}}); !errors.Is(err, ErrLinkOwn) {
		t.Fatalf("writing lnk's own folder: got %v, want rule %s", err, ErrLinkOwn.Rule)
	}
	comp, err := CompileFlags(home, home, Grants{Write: []string{work}})
	if err != nil {
		t.Fatalf("writing a folder elsewhere, lnk's path known: %v", err)
	}
	if len(comp.Folders) == 0 || comp.Folders[len(comp.Folders)-1].Path != work {
		t.Fatalf("compiled folders %+v, want %s written", comp.Folders, work)
	}
}
