package cli

import (
	"fmt"
	"os"
	"path/filepath"
)

// besideLnk is the path of Link's program name in the folder holding the
// running lnk, as /proc/self/exe names it (links resolved): make install
// and the package put every program there, and lnk never looks one up on
// PATH. A program missing there is refused at once with a hint, rather
// than left to fail inside bwrap or an exec with a message of theirs.
func besideLnk(name string) (string, error) {
	p, err := lnkProgram(name)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return "", Fail(ExitFailure, fmt.Errorf("%s, one of Link's programs, is not beside lnk: %s", name, p),
			"install Link again: make install (or its package) puts every program of Link's in one folder")
	}
	return p, nil
}

// lnkProgram is besideLnk's path, not yet checked.
func lnkProgram(name string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(exe), name), nil
}
