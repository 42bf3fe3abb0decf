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
		if flags&unix.O_DIRECTORY != 0 {
			// A folder is looked at before it is opened as asked, so a
			// link is told from a file without a second lookup by name.
			fd, err := r.openDirAt(cur, comp, flags)
			release()
			if err != nil {
				return -1, &Error{Op: op, Path: full, Kind: classify(err), Err: err}
			}
			return fd, nil
		}
		fd, err := openNoFollow(cur, comp, flags)
		if err == unix.ENXIO {
			// A socket; say so if it was a link by now.
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

// openDirAt opens the folder comp in dirfd with flags: O_PATH|O_NOFOLLOW
// first, checked to be a folder on the same filesystem and not a link,
// then, unless O_PATH was asked for, reopened as "." from that handle.
func (r *Root) openDirAt(dirfd int, comp string, flags int) (int, error) {
	fd, err := openNoFollow(dirfd, comp, unix.O_PATH)
	if err != nil {
		return -1, err
	}
	if k := r.checkStep(fd, true); k != nil {
		unix.Close(fd)
		return -1, errnoOf(k)
	}
	if flags&unix.O_PATH != 0 {
		return fd, nil
	}
	dfd, err := openNoFollow(fd, ".", flags)
	unix.Close(fd)
	return dfd, err
}

// errnoOf is the errno that classify turns back into k.
func errnoOf(k error) error {
	switch k {
	case ErrLink:
		return unix.ELOOP
	case ErrNotDir:
		return unix.ENOTDIR
	case ErrEscape:
		return unix.EXDEV
	}
	return unix.EIO
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
