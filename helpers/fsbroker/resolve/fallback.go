package resolve

import (
	"strings"

	"golang.org/x/sys/unix"
)

// walk is the fallback for a kernel without openat2 (before 5.6, or a
// seccomp filter that answers ENOSYS): each folder on the way is opened
// O_PATH|O_NOFOLLOW from the one before and checked with fstat to be a
// folder on the held folder's filesystem, never a link, and the last
// component is opened with O_NOFOLLOW. It gives the same answer as
// openat2 under [resolveFlags] (FuzzResolveDifferential checks that), with
// one difference the package doc names: a bind mount of the same
// filesystem is not seen as a mount crossing.
func (r *Root) walk(dirfd int, op, name string, flags int) (int, error) {
	full := name
	cur, owned := dirfd, false
	release := func() {
		if owned {
			unix.Close(cur)
		}
	}
	for name != "" {
		comp, rest, more := strings.Cut(name, "/")
		name = rest
		if more {
			fd, err := openNoFollow(cur, comp, unix.O_PATH)
			if err != nil {
				release()
				return -1, fail(op, full, err)
			}
			if k := r.checkStep(fd, true); k != nil {
				unix.Close(fd)
				release()
				return -1, &Error{Op: op, Path: full, Kind: k}
			}
			release()
			cur, owned = fd, true
			continue
		}
		fd, err := openNoFollow(cur, comp, flags)
		if err == unix.ENOTDIR || err == unix.ENXIO {
			// O_DIRECTORY on a link answers ENOTDIR; say it was a link.
			var st unix.Stat_t
			if unix.Fstatat(cur, comp, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = unix.ELOOP
			}
		}
		if err == nil {
			// O_PATH|O_NOFOLLOW opens a link itself; another filesystem
			// mounted here is a crossing.
			if k := r.checkStep(fd, false); k != nil {
				unix.Close(fd)
				release()
				return -1, &Error{Op: op, Path: full, Kind: k}
			}
		}
		release()
		if err != nil {
			return -1, fail(op, full, err)
		}
		return fd, nil
	}
	release()
	return -1, refuse(op, full, ErrInvalid)
}

func openNoFollow(dirfd int, comp string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, comp, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// checkStep refuses a link, a mount crossing and, on the way, anything
// but a folder.
func (r *Root) checkStep(fd int, mustDir bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return classify(err)
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return ErrLink
	case mustDir && st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return ErrNotDir
	case st.Dev != r.dev:
		return ErrEscape
	}
	return nil
}
