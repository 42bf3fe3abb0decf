package resolve

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// kind is one class of refusal. Each is a distinct sentinel that callers
// tell apart with errors.Is; ErrNotFound also matches fs.ErrNotExist and
// ErrExists fs.ErrExist, so callers written against io/fs keep working.
type kind struct {
	msg string
	std error
}

func (k *kind) Error() string { return k.msg }

func (k *kind) Is(target error) bool { return k.std != nil && target == k.std }

// The refusals. Every error this package returns for a refusal is an
// [*Error] whose Kind is one of these.
var (
	ErrInvalid    error = &kind{msg: "not a valid name"}
	ErrEscape     error = &kind{msg: "outside its folder"}
	ErrLink       error = &kind{msg: "through a link"}
	ErrNotRegular error = &kind{msg: "not a regular file"}
	ErrNotDir     error = &kind{msg: "not a folder"}
	ErrTooLarge   error = &kind{msg: "too large"}
	ErrNotFound   error = &kind{msg: "not found", std: fs.ErrNotExist}
	ErrExists     error = &kind{msg: "already exists", std: fs.ErrExist}
	ErrBusy       error = &kind{msg: "busy: the folder kept changing while it was opened"}
	ErrChanged    error = &kind{msg: "changed since the version named"}
	ErrClosed     error = &kind{msg: "folder handle closed", std: fs.ErrClosed}
)

// Error is what every operation returns: the operation, the name it was
// given (relative to the held folder), the class of refusal, and the
// system's error where there was one.
type Error struct {
	Op   string // "open", "read", "write", "mkdir", "remove", "rename", "list", "walk", "stat"
	Path string
	Kind error // one of the Err* sentinels above, or nil for an unclassified failure
	Err  error // the underlying errno, if any
}

func (e *Error) Error() string {
	s := e.Op + " " + quote(e.Path) + ": "
	switch {
	case e.Kind != nil && e.Err != nil:
		return s + e.Kind.Error() + " (" + e.Err.Error() + ")"
	case e.Kind != nil:
		return s + e.Kind.Error()
	case e.Err != nil:
		return s + e.Err.Error()
	}
	return s + "failed"
}

// Unwrap lets errors.Is see both the class and the errno.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Kind != nil {
		out = append(out, e.Kind)
	}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

func refuse(op, path string, k error) error { return &Error{Op: op, Path: path, Kind: k} }

// fail classifies a system error from a lookup or an operation.
func fail(op, path string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Op: op, Path: path, Kind: classify(err), Err: err}
}

// classify maps an errno to its class of refusal. ELOOP is what
// RESOLVE_NO_SYMLINKS and O_NOFOLLOW answer for a link anywhere on the
// way; EXDEV what RESOLVE_BENEATH and RESOLVE_NO_XDEV answer for a path
// leaving the folder or crossing a mount; ENXIO what opening a socket
// answers.
func classify(err error) error {
	switch err {
	case unix.ELOOP:
		return ErrLink
	case unix.EXDEV:
		return ErrEscape
	case unix.EAGAIN:
		return ErrBusy
	case unix.ENOENT:
		return ErrNotFound
	case unix.ENOTDIR:
		return ErrNotDir
	case unix.EEXIST:
		return ErrExists
	case unix.ENXIO, unix.EISDIR:
		return ErrNotRegular
	case unix.EFBIG:
		return ErrTooLarge
	case unix.ENAMETOOLONG:
		return ErrInvalid
	case unix.EBADF:
		return ErrClosed
	}
	return nil
}

func quote(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "…"
	}
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20 || c == 0x7f:
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}
