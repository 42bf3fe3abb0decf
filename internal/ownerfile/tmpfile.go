package ownerfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// TempFile opens a new unnamed file (O_TMPFILE, 0600, read and write) in
// the held folder dirfd: no name of it ever appears there, and it is gone
// when closed. Where the file system has no O_TMPFILE, a hidden O_EXCL
// file is made and unlinked at once.
func TempFile(dirfd int) (*os.File, error) {
	fd, err := unix.Openat(dirfd, ".", unix.O_TMPFILE|unix.O_RDWR|always, 0o600)
	if err == nil {
		return os.NewFile(uintptr(fd), "(unnamed)"), nil
	}
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EINVAL) {
		return nil, err
	}
	tmp, err := CreateTemp(dirfd, "unnamed", nil, Write{NoSync: true})
	if err != nil {
		return nil, err
	}
	fd, err = Open(dirfd, tmp, unix.O_RDWR, 0)
	unix.Unlinkat(dirfd, tmp, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "(unnamed)"), nil
}
