package resolve

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"

	"golang.org/x/sys/unix"
)

// WriteOptions say how [Root.WriteFile] writes.
type WriteOptions struct {
	// Mode is the new file's permission bits, masked to 0o777 (never
	// setuid, setgid or sticky). Zero keeps an existing file's bits, or
	// makes a new file 0o600.
	Mode fs.FileMode
	// Expect is the version the write names: the zero Version replaces
	// whatever regular file is there, [Absent] refuses a name that exists
	// (ErrExists), any other refuses a file that changed since
	// (ErrChanged).
	Expect Version
}

// WriteFile writes data to name atomically through its folder's handle:
// a temporary file is made beside it (O_CREAT|O_EXCL|O_NOFOLLOW), written,
// fsynced, renamed over name, and the folder fsynced. A reader sees the old
// file or the new one, never a part. A name that is a link, a folder or
// any other non-regular file is refused (ErrLink, ErrNotRegular), never
// written through. It returns the new file's version.
//
// The version check and the rename are two steps: a writer outside Link
// that changes the file between them is not seen. An [Absent] write is
// exact (renameat2 RENAME_NOREPLACE).
func (r *Root) WriteFile(name string, data []byte, opt WriteOptions) (Version, error) {
	const op = "write"
	if k := validate(name); k != nil || name == "." {
		if k == nil {
			k = ErrInvalid
		}
		return Version{}, refuse(op, name, k)
	}
	dir, base := split(name)
	dirfd, err := r.resolve(op, dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return Version{}, relabel(err, name)
	}
	defer unix.Close(dirfd)

	mode, err := checkTarget(dirfd, op, name, base, opt)
	if err != nil {
		return Version{}, err
	}
	tmp, fd, err := makeTemp(dirfd, mode)
	if err != nil {
		return Version{}, fail(op, name, err)
	}
	defer unix.Close(fd)
	done := false
	defer func() {
		if !done {
			unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	if err := writeAll(fd, data); err != nil {
		return Version{}, fail(op, name, err)
	}
	if err := unix.Fsync(fd); err != nil {
		return Version{}, fail(op, name, err)
	}
	if _, err := checkTarget(dirfd, op, name, base, opt); err != nil {
		return Version{}, err
	}
	if err := renameInto(dirfd, tmp, base, opt.Expect.IsAbsent()); err != nil {
		return Version{}, fail(op, name, err)
	}
	done = true
	if err := unix.Fsync(dirfd); err != nil {
		return Version{}, fail(op, name, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Version{}, fail(op, name, err)
	}
	return versionOf(&st), nil
}

// Replace is a compare-and-swap: it writes data to name only if the file
// is still at version expect ([Absent] for a file that must not exist),
// keeping the file's mode. A zero expect is refused: Replace always names
// a version.
func (r *Root) Replace(name string, data []byte, expect Version) (Version, error) {
	if expect.IsZero() {
		return Version{}, refuse("replace", name, ErrChanged)
	}
	return r.WriteFile(name, data, WriteOptions{Expect: expect})
}

// checkTarget looks at what name holds now, without following it, and
// returns the mode the new file gets.
func checkTarget(dirfd int, op, name, base string, opt WriteOptions) (uint32, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	mode := uint32(opt.Mode) & 0o777
	switch {
	case err == unix.ENOENT:
		if !opt.Expect.IsZero() && !opt.Expect.IsAbsent() {
			return 0, refuse(op, name, ErrChanged)
		}
		if mode == 0 {
			mode = 0o600
		}
		return mode, nil
	case err != nil:
		return 0, fail(op, name, err)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return 0, refuse(op, name, ErrLink)
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return 0, refuse(op, name, ErrNotRegular)
	case opt.Expect.IsAbsent():
		return 0, refuse(op, name, ErrExists)
	case !opt.Expect.IsZero() && versionOf(&st) != opt.Expect:
		return 0, refuse(op, name, ErrChanged)
	}
	if mode == 0 {
		mode = st.Mode & 0o777
	}
	return mode, nil
}

// makeTemp makes a temporary file (".lnk-tmp-" and 32 random hex digits,
// see [IsTempName]) beside the target, exclusively and never through a
// link, with exactly mode (umask aside, set by fchmod).
func makeTemp(dirfd int, mode uint32) (string, int, error) {
	for range 8 {
		var rnd [tempRandLen / 2]byte
		rand.Read(rnd[:])
		tmp := tempPrefix + hex.EncodeToString(rnd[:])
		fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == unix.EEXIST || err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", -1, err
		}
		if err := unix.Fchmod(fd, mode); err != nil {
			unix.Close(fd)
			unix.Unlinkat(dirfd, tmp, 0)
			return "", -1, err
		}
		return tmp, fd, nil
	}
	return "", -1, unix.EEXIST
}

func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// renameInto moves tmp over base; with noReplace it refuses an existing
// base (EEXIST), by RENAME_NOREPLACE or, on a filesystem without it, by
// link(2), which never replaces.
func renameInto(dirfd int, tmp, base string, noReplace bool) error {
	if !noReplace {
		return unix.Renameat(dirfd, tmp, dirfd, base)
	}
	err := unix.Renameat2(dirfd, tmp, dirfd, base, unix.RENAME_NOREPLACE)
	if err != unix.EINVAL {
		return err
	}
	if err := unix.Linkat(dirfd, tmp, dirfd, base, 0); err != nil {
		return err
	}
	unix.Unlinkat(dirfd, tmp, 0)
	return nil
}

// relabel makes an error about a name's folder name the whole name.
func relabel(err error, name string) error {
	if e, ok := err.(*Error); ok {
		c := *e
		c.Path = name
		return &c
	}
	return err
}
