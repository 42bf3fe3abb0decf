package ownerfile

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// MakeDir makes the folder name in dirfd (mode 0700) when missing and
// opens it as OpenDir does, with flags (O_RDONLY or O_PATH); the folder
// must then pass r.
func MakeDir(dirfd int, name string, flags int, r Rule) (int, error) {
	if err := oneName(name); err != nil {
		return -1, err
	}
	if err := unix.Mkdirat(dirfd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, fmt.Errorf("making %s: %w", name, err)
	}
	fd, err := OpenDir(dirfd, name, flags)
	if err != nil {
		return -1, err
	}
	r.Type = unix.S_IFDIR
	if err := Check(fd, r); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("%s: %w", name, err)
	}
	return fd, nil
}

// SyncDir fsyncs the folder dirfd, which may be an O_PATH handle (fsync
// refuses one: the folder is reopened read-only from itself).
func SyncDir(dirfd int) error {
	d, err := unix.Openat(dirfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(d)
	return unix.Fsync(d)
}

// Rename moves oldName in olddir to newName in newdir, each one name in
// its held folder (a link is moved as itself, never followed). flags is
// 0 (replace) or unix.RENAME_NOREPLACE.
func Rename(olddir int, oldName string, newdir int, newName string, flags uint) error {
	if err := oneName(oldName); err != nil {
		return err
	}
	if err := oneName(newName); err != nil {
		return err
	}
	if flags == 0 {
		return unix.Renameat(olddir, oldName, newdir, newName)
	}
	return unix.Renameat2(olddir, oldName, newdir, newName, flags)
}
