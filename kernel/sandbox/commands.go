package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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

// Hint says how to allow it: a program named by its path is granted by
// that path (a name alone is looked up on the sandbox's PATH).
func (e *NotACommandError) Hint() string {
	name := e.Program
	if !filepath.IsAbs(name) {
		name = filepath.Base(name)
	}
	return "grant it: lnk sandbox run --command " + name + " …, or add it to [commands]"
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
		real, interps, err := r.resolve(p)
		if err != nil {
			return err
		}
		if seen[real] || depth > 4 {
			return nil
		}
		seen[real] = true
		out = append(out, real)
		for _, next := range interps {
			if err := walk(next, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(path, 0)
}

// resolve is path with its links resolved and the interpreters of the
// file it names: the #! interpreter (with env's program) or the ELF
// PT_INTERP. One open serves both: the kernel resolves the links
// (/proc/self/fd names the file it opened) and the first page is read from
// the same fd. A file that cannot be read (execute-only) has no
// interpreters; a path /proc cannot name is resolved by
// filepath.EvalSymlinks.
func (r *resolver) resolve(path string) (string, []string, error) {
	if real, ok := r.real[path]; ok {
		return real, r.interp[real], nil
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	readable := err == nil
	if !readable {
		fd, err = unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return "", nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	real, err := fdPath(fd)
	if err != nil {
		if real, err = filepath.EvalSymlinks(path); err != nil {
			return "", nil, err
		}
	}
	r.real[path] = real
	in, ok := r.interp[real]
	if !ok {
		if readable {
			in = r.readInterpreters(fd)
		}
		r.interp[real] = in
	}
	return real, in, nil
}

// fdPath is the path /proc/self/fd gives the file open at fd: absolute,
// every link resolved.
func fdPath(fd int) (string, error) {
	var b [unix.PathMax]byte
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), b[:])
	if err != nil {
		return "", err
	}
	p := string(b[:n])
	if n == len(b) || !filepath.IsAbs(p) || strings.HasSuffix(p, " (deleted)") {
		return "", errors.New("no path for the fd")
	}
	return p, nil
}

func (r *resolver) readInterpreters(fd int) []string {
	n := 0
	for n < len(r.head) {
		m, err := unix.Pread(fd, r.head[n:], int64(n))
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
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
