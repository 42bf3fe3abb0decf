package resolve

import (
	"io/fs"
	"strings"

	"golang.org/x/sys/unix"
)

// MkdirAll makes the folder name and any missing folder on the way, like
// mkdir -p, without following a link: each folder, found or made, is
// opened from the one before with the openat2 rules (RESOLVE_BENEATH,
// RESOLVE_NO_SYMLINKS), so a link found on the way, or swapped in for a
// folder just made, is refused (ErrLink) and nothing is made through it.
// New folders get mode masked to 0o777 (0 means 0o700), less the umask.
func (r *Root) MkdirAll(name string, mode fs.FileMode) error {
	const op = "mkdir"
	if r.fd < 0 {
		return refuse(op, name, ErrClosed)
	}
	if k := validate(name); k != nil {
		return refuse(op, name, k)
	}
	perm := uint32(mode) & 0o777
	if perm == 0 {
		perm = 0o700
	}
	if name == "." {
		return nil
	}
	cur, owned := r.fd, false
	defer func() {
		if owned {
			unix.Close(cur)
		}
	}()
	for rest := name; rest != ""; {
		comp, next, _ := strings.Cut(rest, "/")
		rest = next
		fd, err := r.at(cur, op, comp, unix.O_PATH|unix.O_DIRECTORY)
		if isNotFound(err) {
			if err := unix.Mkdirat(cur, comp, perm); err != nil && err != unix.EEXIST {
				return fail(op, name, err)
			}
			fd, err = r.at(cur, op, comp, unix.O_PATH|unix.O_DIRECTORY)
		}
		if err != nil {
			return relabel(err, name)
		}
		if owned {
			unix.Close(cur)
		}
		cur, owned = fd, true
	}
	return nil
}

func isNotFound(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Kind == ErrNotFound
}

// Mkdir makes the one folder name in an existing folder; an existing name
// is ErrExists.
func (r *Root) Mkdir(name string, mode fs.FileMode) error {
	const op = "mkdir"
	perm := uint32(mode) & 0o777
	if perm == 0 {
		perm = 0o700
	}
	return r.inParent(op, name, func(dirfd int, base string) error {
		return unix.Mkdirat(dirfd, base, perm)
	})
}

// Remove removes the file, link or empty folder name from its folder,
// through that folder's handle. A link is removed itself, never followed.
func (r *Root) Remove(name string) error {
	return r.inParent("remove", name, func(dirfd int, base string) error {
		err := unix.Unlinkat(dirfd, base, 0)
		if err == unix.EISDIR {
			err = unix.Unlinkat(dirfd, base, unix.AT_REMOVEDIR)
		}
		return err
	})
}

// Rename moves oldname to newname, both beneath r, through their folders'
// handles, replacing a file at newname as rename(2) does. A link is moved
// itself, never followed.
func (r *Root) Rename(oldname, newname string) error {
	return r.rename(oldname, newname, 0)
}

// RenameNoReplace is [Root.Rename] that refuses an existing newname
// (ErrExists).
func (r *Root) RenameNoReplace(oldname, newname string) error {
	return r.rename(oldname, newname, unix.RENAME_NOREPLACE)
}

func (r *Root) rename(oldname, newname string, flags uint) error {
	const op = "rename"
	return r.inParent(op, oldname, func(olddir int, oldbase string) error {
		err := r.inParent(op, newname, func(newdir int, newbase string) error {
			return unix.Renameat2(olddir, oldbase, newdir, newbase, flags)
		})
		if e, ok := err.(*Error); ok && e.Err == unix.ENOTEMPTY {
			e.Kind = ErrExists
		}
		return err
	})
}

// inParent opens name's folder (never through a link) and runs fn on its
// handle and name's last component. The held folder itself (".") is
// never the target.
func (r *Root) inParent(op, name string, fn func(dirfd int, base string) error) error {
	if k := validate(name); k != nil || name == "." {
		if k == nil {
			k = ErrInvalid
		}
		return refuse(op, name, k)
	}
	dir, base := split(name)
	dirfd, err := r.resolve(op, dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return relabel(err, name)
	}
	defer unix.Close(dirfd)
	if err := fn(dirfd, base); err != nil {
		if _, ok := err.(*Error); ok {
			return err
		}
		e := &Error{Op: op, Path: name, Kind: classify(err), Err: err}
		if err == unix.ENOTEMPTY {
			e.Kind = nil
		}
		return e
	}
	return nil
}
