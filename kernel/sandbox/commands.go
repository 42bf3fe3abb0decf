package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/execinterp"
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

// resolver finds the files exec'ing a program needs, for one Build: the
// same interpreter (ld.so for every ELF program) is resolved and read once,
// into one buffer. It lives no longer than the build, so nothing it learnt
// can outlast a change on disk.
type resolver struct {
	real   map[string]string   // path: its links resolved
	interp map[string][]string // real path: its interpreters
	head   [execinterp.MaxHead]byte
}

func newResolver() *resolver {
	return &resolver{real: map[string]string{}, interp: map[string][]string{}}
}

// execFiles is every file exec'ing path needs the execute right on: the
// program itself (links resolved), its #! interpreter and their ELF
// interpreters, recursively (at most 4 deep).
func (r *resolver) execFiles(path string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	var walk func(p string, depth int) error
	walk = func(p string, depth int) error {
		real, err := r.evalSymlinks(p)
		if err != nil {
			return err
		}
		if seen[real] || depth > 4 {
			return nil
		}
		seen[real] = true
		out = append(out, real)
		for _, next := range r.interpreters(real) {
			if err := walk(next, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(path, 0)
}

// interpreters is the #! interpreter (with env's program) or the ELF
// PT_INTERP of a file (its path has its links resolved).
func (r *resolver) interpreters(path string) []string {
	if in, ok := r.interp[path]; ok {
		return in
	}
	in := r.readInterpreters(path)
	r.interp[path] = in
	return in
}

func (r *resolver) readInterpreters(path string) []string {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	n := 0
	for n < len(r.head) {
		m, err := unix.Pread(fd, r.head[n:], int64(n))
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	unix.Close(fd)
	fields, interp := execinterp.Of(r.head[:n])
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

// evalSymlinks is filepath.EvalSymlinks, remembered for the build.
func (r *resolver) evalSymlinks(p string) (string, error) {
	if real, ok := r.real[p]; ok {
		return real, nil
	}
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		r.real[p] = real
	}
	return real, err
}
