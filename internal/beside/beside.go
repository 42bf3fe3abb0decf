package beside

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrMissing matches (errors.Is) the error for one of Link's programs
// that is not a regular executable file in its folder, which names the
// program and its path.
var ErrMissing = errors.New("one of Link's programs is missing from the folder of Link's programs")

// missingError is ErrMissing for one program, saying which and where.
type missingError struct{ name, path string }

func (e *missingError) Error() string {
	return fmt.Sprintf("%s, one of Link's programs, is not beside lnk: %s", e.name, e.path)
}

func (e *missingError) Is(target error) bool { return target == ErrMissing }

// Hint is what to run when a program is missing.
const Hint = "install Link again: make install (or its package) puts every program of Link's in one folder"

// Dir is the folder holding the running program.
func Dir() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("the running program's path: %w", err)
	}
	return filepath.Dir(exe), nil
}

// Path is program name in Dir, not checked: for a caller that only
// names it (an exec of it says what failed, or a later Program does).
func Path(name string) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name), nil
}

// Program is program name in Dir, refused (ErrMissing) unless a regular
// executable file is there.
func Program(name string) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return In(dir, name)
}

// In is program name in dir (a folder named in place of Dir, as a test's
// or the kernel's BinDir), refused (ErrMissing) unless a regular
// executable file is there.
func In(dir, name string) (string, error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return "", fmt.Errorf("%q is no program's name", name)
	}
	p := filepath.Join(dir, name)
	fi, err := os.Stat(p)
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("%s, one of Link's programs: %w", p, err)
	case err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return "", &missingError{name: name, path: p}
	}
	return p, nil
}
