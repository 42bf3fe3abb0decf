package resolve

import (
	"os"

	"golang.org/x/sys/unix"
)

// Root is a held folder: every name given to its methods is resolved
// beneath it and only through it. A Root is safe for concurrent use; Close
// it only once no call on it is in flight.
type Root struct {
	fd  int
	dev uint64 // its filesystem, which the fallback walk never leaves

	// fallback forces the per-component walk even where openat2 works.
	// Only tests set it (export_test.go), to race and fuzz both walks.
	fallback bool

	local int32 // atomic: whether the folder is on a local filesystem: see localFS
}

// OpenRoot opens the folder at path as a Root: O_PATH|O_DIRECTORY|
// O_NOFOLLOW, so a path whose last component is a link is refused. The
// folders above it are the caller's to trust (they are Link's own or the
// owner's); everything beneath it is not.
func OpenRoot(path string) (*Root, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOTDIR {
			// O_NOFOLLOW on a link with O_DIRECTORY answers ENOTDIR.
			var st unix.Stat_t
			if unix.Lstat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = unix.ELOOP
			}
		}
		return nil, fail("open", path, err)
	}
	return newRoot(fd, path)
}

// Identity is the held folder's device and inode, as fstat tells them
// now: a caller that also holds the folder's path can tell whether the
// path still names it.
func (r *Root) Identity() (dev, ino uint64, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(r.fd, &st); err != nil {
		return 0, 0, fail("stat", ".", err)
	}
	return st.Dev, st.Ino, nil
}

// NewRoot takes over fd, a folder handle (O_PATH or O_RDONLY with
// O_DIRECTORY) such as one received over SCM_RIGHTS. fd belongs to the
// Root from then on, also when NewRoot fails.
func NewRoot(fd int) (*Root, error) { return newRoot(fd, ".") }

// NewRootFile is [NewRoot] for an *os.File; f is closed when the Root is.
// The Root holds a duplicate of f's fd, and f is closed at once.
func NewRootFile(f *os.File) (*Root, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	f.Close()
	if err != nil {
		return nil, fail("open", f.Name(), err)
	}
	return newRoot(fd, f.Name())
}

func newRoot(fd int, name string) (*Root, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, fail("open", name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		unix.Close(fd)
		return nil, refuse("open", name, ErrNotDir)
	}
	return &Root{fd: fd, dev: st.Dev}, nil
}

// Fd is the held folder's descriptor, for handing on over SCM_RIGHTS; it
// stays the Root's.
func (r *Root) Fd() int { return r.fd }

// Close lets go of the folder.
func (r *Root) Close() error {
	if r.fd < 0 {
		return refuse("close", ".", ErrClosed)
	}
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}

// OpenDir opens the folder chain to name, each folder from the one before
// and never through a link, and returns it as a Root of its own (the "."
// name returns a new handle on r's folder).
func (r *Root) OpenDir(name string) (*Root, error) {
	fd, err := r.resolve("open", name, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return nil, err
	}
	return &Root{fd: fd, dev: r.dev, fallback: r.fallback}, nil
}
