package beside

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIn: a regular executable file is found; a missing program, a
// folder, a file not executable, and a name that is a path are refused
// with ErrMissing (or as no name) and the path said.
func TestIn(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "lnk-x"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "lnk-plain"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(dir, "lnk-dir"), 0o755)
	if p, err := In(dir, "lnk-x"); err != nil || p != filepath.Join(dir, "lnk-x") {
		t.Fatalf("the positive control: %q %v", p, err)
	}
	for _, name := range []string{"lnk-gone", "lnk-plain", "lnk-dir"} {
		_, err := In(dir, name)
		if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), filepath.Join(dir, name)) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"", ".", "..", "../lnk-x", "sub/lnk-x"} {
		if _, err := In(dir, name); err == nil {
			t.Errorf("%q found", name)
		}
	}
}

// TestProgramBesideThisOne: the running test binary is found beside
// itself; a name not there is refused.
func TestProgramBesideThisOne(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p, err := Program(filepath.Base(exe)); err != nil || p != exe {
		t.Fatalf("%q %v, want %q", p, err, exe)
	}
	if _, err := Program("lnk-no-such-program"); !errors.Is(err, ErrMissing) {
		t.Fatalf("a missing program: %v", err)
	}
	if p, err := Path("lnk-no-such-program"); err != nil || p != filepath.Join(filepath.Dir(exe), "lnk-no-such-program") {
		t.Fatalf("Path: %q %v", p, err)
	}
}
