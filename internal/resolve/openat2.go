package resolve

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// resolveFlags are the openat2 rules every lookup runs under: never above
// the held folder, never through a link of any kind, never onto another
// mount.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS |
	unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// Bounds on retrying a lookup the kernel answered EAGAIN or EXDEV for
// because the tree was being renamed under it.
const (
	maxRetries  = 64
	maxEXDEV    = 4 // an EXDEV that stays is a mount crossing or an escape
	retryWindow = 50 * time.Millisecond
)

// resolve checks name and opens it beneath r with flags (O_CLOEXEC is
// always added). It returns a descriptor the caller owns.
func (r *Root) resolve(op, name string, flags int) (int, error) {
	return r.resolveRaw(op, name, flags, false)
}

// resolveRaw is resolve; raw as in [Root.beneath].
func (r *Root) resolveRaw(op, name string, flags int, raw bool) (int, error) {
	if r.fd < 0 {
		return -1, refuse(op, name, ErrClosed)
	}
	if k := validate(name); k != nil {
		return -1, refuse(op, name, k)
	}
	return r.beneath(r.fd, op, name, flags, raw)
}

// at opens a valid name beneath dirfd. O_NOFOLLOW is deliberately not in
// flags: with O_PATH|O_NOFOLLOW openat2 would hand back the link itself,
// while without it RESOLVE_NO_SYMLINKS refuses a trailing link (ELOOP)
// like any other.
//
// The fallback walk is taken only when openat2 itself is missing
// (ENOSYS), decided again at every call: a kernel or seccomp filter that
// refused a lookup never turns the rules off, and nothing is cached.
func (r *Root) at(dirfd int, op, name string, flags int) (int, error) {
	return r.beneath(dirfd, op, name, flags, false)
}

// beneath is [Root.at]; raw makes each openat2 a raw system call (see
// [Root.ReadFileRaw] for when that is allowed). The fallback walk, taken
// on ENOSYS, always makes ordinary ones.
func (r *Root) beneath(dirfd int, op, name string, flags int, raw bool) (int, error) {
	if r.fallback {
		return r.walk(dirfd, op, name, flags)
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolveFlags}
	var deadline time.Time
	exdev := 0
	for attempt := 0; ; attempt++ {
		fd, err := openat2(dirfd, name, &how, raw)
		if err == nil {
			return fd, nil
		}
		switch err {
		case unix.EINTR:
			continue
		case unix.ENOSYS:
			return r.walk(dirfd, op, name, flags)
		case unix.EAGAIN, unix.EXDEV:
			if err == unix.EXDEV {
				exdev++
			} else {
				exdev = 0
			}
			if attempt == 0 {
				deadline = time.Now().Add(retryWindow)
			}
			if exdev >= maxEXDEV {
				return -1, fail(op, name, err) // ErrEscape
			}
			if attempt < maxRetries && time.Now().Before(deadline) {
				runtime.Gosched()
				continue
			}
			return -1, &Error{Op: op, Path: name, Kind: ErrBusy, Err: err}
		}
		return -1, fail(op, name, err)
	}
}
