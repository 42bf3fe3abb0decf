package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// What runs outside the sandbox when it sits at the top of a written
// folder (caps.Compiled.ReadOnly: .git, .envrc, .vscode, .idea) is bound
// read-only over itself. One that is absent is made first, empty (a
// folder; .envrc an empty file), from outside and never through a link,
// so the sandbox cannot create it either: the placeholder stays in the
// owner's folder, where git, editors and direnv take an empty one as
// none. One that is a link is refused: bound, it would be followed.

// ErrReadOnlyLink refuses a read-only name at the top of a written folder
// that is a link.
var ErrReadOnlyLink = errors.New("is a link at the top of a written folder, which the sandbox can keep read-only only as a file or folder")

// readOnlyTops binds each of paths read-only, making the absent ones.
func (s *Sandbox) readOnlyTops(paths []string) error {
	for _, r := range paths {
		f, err := readOnlyTop(r, s.openFolder)
		if err != nil {
			return err
		}
		s.args = append(s.args, "--ro-bind-fd")
		s.fdArg(f)
		s.args = append(s.args, r)
	}
	return nil
}

// readOnlyTop opens r (O_PATH, no links) in its folder, which open
// opens, making an empty placeholder where it is absent.
func readOnlyTop(r string, open func(string) (*os.File, error)) (*os.File, error) {
	parent, err := open(filepath.Dir(r))
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	pfd, name := int(parent.Fd()), filepath.Base(r)
	var st unix.Stat_t
	err = unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		if err := placeholder(pfd, name); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("sandbox: make %s read-only: %w", r, err)
		}
	case err != nil:
		return nil, fmt.Errorf("sandbox: %s: %w", r, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return nil, &ReadOnlyLinkError{Path: r}
	}
	fd, err := ownerfile.Open(pfd, name, unix.O_PATH, 0) // a link opens as itself: refused below
	if err != nil {
		return nil, fmt.Errorf("sandbox: open %s: %w", r, err)
	}
	if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK { // swapped in since
		unix.Close(fd)
		return nil, &ReadOnlyLinkError{Path: r}
	}
	return os.NewFile(uintptr(fd), r), nil
}

// placeholder makes name empty in the folder pfd: a 0600 file for
// .envrc, a 0700 folder for the others.
func placeholder(pfd int, name string) error {
	if name == ".envrc" {
		fd, err := ownerfile.Open(pfd, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY, 0o600)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	return unix.Mkdirat(pfd, name, 0o700)
}

// ReadOnlyLinkError names the link refused.
type ReadOnlyLinkError struct{ Path string }

func (e *ReadOnlyLinkError) Error() string { return e.Path + " " + ErrReadOnlyLink.Error() }
func (e *ReadOnlyLinkError) Unwrap() error { return ErrReadOnlyLink }

// Rule names the rule, so the CLI exits 3 (a rule refused).
func (e *ReadOnlyLinkError) Rule() string { return "files read-only" }

// Hint says what the owner can do.
func (e *ReadOnlyLinkError) Hint() string {
	return "replace the link " + e.Path + " with what it points to, or remove it, then run again"
}
