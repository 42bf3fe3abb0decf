package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ErrNotACommand refuses a command that [commands] does not list.
var ErrNotACommand = errors.New("not in the sandbox's [commands]")

// NotACommandError names the program refused.
type NotACommandError struct{ Program string }

func (e *NotACommandError) Error() string {
	return fmt.Sprintf("%s is %v", e.Program, ErrNotACommand)
}
func (e *NotACommandError) Unwrap() error { return ErrNotACommand }

// Rule names the grant rule, so the CLI exits 3 (a rule refused).
func (e *NotACommandError) Rule() string { return "commands" }

// Hint says how to allow it.
func (e *NotACommandError) Hint() string {
	return "grant it: lnk sandbox run --command " + filepath.Base(e.Program) + " …, or add it to [commands]"
}

// lookPath finds name on the sandbox's PATH (or as a path from dir).
func lookPath(name, dir string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return filepath.Clean(name), nil
	}
	for _, d := range filepath.SplitList(Path) {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on the sandbox's PATH (%s)", name, Path)
}

// execFiles is every file exec'ing path needs the execute right on: the
// program itself (links resolved), its #! interpreter and their ELF
// interpreters, recursively (at most 4 deep).
func execFiles(path string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	var walk func(p string, depth int) error
	walk = func(p string, depth int) error {
		real, err := evalSymlinks(p)
		if err != nil {
			return err
		}
		if seen[real] || depth > 4 {
			return nil
		}
		seen[real] = true
		out = append(out, real)
		for _, next := range interpreters(real) {
			if err := walk(next, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(path, 0)
}

// interpreters is the #! interpreter (with env's program) or the ELF
// PT_INTERP of a file.
func interpreters(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, maxHead)
	n, _ := io.ReadFull(f, head)
	fields, interp := interpreterOf(head[:n])
	if interp != "" {
		return []string{interp}
	}
	if len(fields) == 0 {
		return nil
	}
	if filepath.Base(fields[0]) == "env" && len(fields) > 1 {
		if p, err := lookPath(fields[1], "/"); err == nil {
			return []string{fields[0], p}
		}
	}
	return []string{fields[0]}
}

var realPaths struct {
	sync.Mutex
	m map[string]string
}

// evalSymlinks is filepath.EvalSymlinks, remembered for the process
// (lnk builds one sandbox per run; the interpreter is shared by all).
func evalSymlinks(p string) (string, error) {
	realPaths.Lock()
	defer realPaths.Unlock()
	if r, ok := realPaths.m[p]; ok {
		return r, nil
	}
	r, err := filepath.EvalSymlinks(p)
	if err == nil {
		if realPaths.m == nil {
			realPaths.m = map[string]string{}
		}
		realPaths.m[p] = r
	}
	return r, err
}
