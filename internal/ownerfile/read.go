package ownerfile

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// OpenFile opens name in the folder dirfd for reading: never through a
// link, never blocking on a fifo, and refused unless it passes r (a zero
// Rule asks only for a regular file). The file returned blocks as usual.
func OpenFile(dirfd int, name string, r Rule) (*os.File, error) {
	fd, err := Open(dirfd, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	return checkedFile(fd, err, name, r)
}

// OpenFilePath is OpenFile for an absolute path resolved through no link.
func OpenFilePath(path string, r Rule) (*os.File, error) {
	fd, err := OpenPath(path, unix.O_RDONLY|unix.O_NONBLOCK)
	return checkedFile(fd, err, path, r)
}

// checkedFile is fd, opened O_NONBLOCK as name (or err), once it passes
// r (a regular file when r names no type), made blocking again.
func checkedFile(fd int, err error, name string, r Rule) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	if r.Type == 0 {
		r.Type = unix.S_IFREG
	}
	if err := Check(fd, r); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// ReadFile reads name in dirfd as OpenFile opens it, refusing one longer
// than max bytes.
func ReadFile(dirfd int, name string, r Rule, max int64) ([]byte, error) {
	f, err := OpenFile(dirfd, name, r)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	return data, nil
}
