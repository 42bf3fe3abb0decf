package secrets

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// Names in ~/.lnk.
const (
	FileName = "secrets.toml"
	lockName = "secrets.lock"
)

// ErrUnsafe is returned for a secrets file or folder Link won't use: a
// link, not regular, not the owner's, or readable by others.
var ErrUnsafe = errors.New("unsafe secrets file")

// OpenDir opens ~/.lnk under home, never through a link, making it 0700
// when missing. home itself is the owner's and trusted.
func OpenDir(home string, create bool) (*os.File, error) {
	hfd, err := unix.Open(home, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening HOME: %w", err)
	}
	defer unix.Close(hfd)
	var fd int
	if create {
		fd, err = ownerfile.MakeDir(hfd, ".lnk", unix.O_RDONLY, ownerfile.PrivateDir)
	} else if fd, err = ownerfile.OpenDir(hfd, ".lnk", unix.O_RDONLY); err == nil {
		if err = checkOwned(fd, true); err != nil {
			unix.Close(fd)
		}
	}
	switch {
	case errors.Is(err, ownerfile.ErrLink):
		return nil, fmt.Errorf("%w: ~/.lnk is a link or not a folder", ErrUnsafe)
	case errors.Is(err, ErrUnsafe):
		return nil, fmt.Errorf("~/.lnk: %w", err)
	case errors.Is(err, ownerfile.ErrNotOwners):
		return nil, fmt.Errorf("%w: ~/%w", ErrUnsafe, err)
	case err != nil:
		return nil, fmt.Errorf("opening ~/.lnk: %w", err)
	}
	return os.NewFile(uintptr(fd), filepath.Join(home, ".lnk")), nil
}

// checkOwned refuses what isn't the owner's, or is open to others.
func checkOwned(fd int, dir bool) error {
	r := ownerfile.Private
	if dir {
		r = ownerfile.PrivateDir
	}
	if err := ownerfile.Check(fd, r); err != nil {
		return fmt.Errorf("%w: %w", ErrUnsafe, err)
	}
	return nil
}

// OpenFile opens secrets.toml in dir for reading, never through a link,
// without blocking on a fifo. A missing file is (nil, nil).
func OpenFile(dir *os.File) (*os.File, error) {
	f, err := ownerfile.OpenFile(int(dir.Fd()), FileName, ownerfile.Private)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case errors.Is(err, ownerfile.ErrLink):
		return nil, fmt.Errorf("%w: ~/.lnk/%s is a link", ErrUnsafe, FileName)
	case errors.Is(err, ownerfile.ErrNotOwners):
		return nil, fmt.Errorf("%w: ~/.lnk/%w", ErrUnsafe, err)
	case err != nil:
		return nil, fmt.Errorf("opening ~/.lnk/%s: %w", FileName, err)
	}
	return f, nil
}

// Read parses an open secrets file from its start.
func Read(f *os.File) (*File, error) {
	if f == nil {
		return &File{Secrets: map[string]*Entry{}}, nil
	}
	if err := checkOwned(int(f.Fd()), false); err != nil {
		return nil, err
	}
	// A buffer of the file's size and a page more: a file that grew
	// past it since is read again into one of the largest size. Each is
	// zeroed, so no copy of a secret is left behind.
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("reading %s: %w", FileName, err)
	}
	data := make([]byte, min(st.Size+4096, MaxFileSize+1))
	n, err := readAllAt(f, data)
	if err == nil && n == len(data) && n <= MaxFileSize {
		clear(data)
		data = make([]byte, MaxFileSize+1)
		n, err = readAllAt(f, data)
	}
	if err != nil {
		clear(data)
		return nil, fmt.Errorf("reading %s: %w", FileName, err)
	}
	if n > MaxFileSize {
		clear(data)
		return nil, fmt.Errorf("%w: larger than 1 MiB", ErrSyntax)
	}
	defer clear(data)
	return Parse(data[:n])
}

func readAllAt(f *os.File, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := f.ReadAt(buf[n:], int64(n))
		n += k
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Load reads ~/.lnk/secrets.toml (an empty File when it doesn't exist).
func Load(home string) (*File, error) {
	dir, err := OpenDir(home, false)
	if errors.Is(err, unix.ENOENT) {
		return &File{Secrets: map[string]*Entry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	f, err := OpenFile(dir)
	if err != nil {
		return nil, err
	}
	if f != nil {
		defer f.Close()
	}
	return Read(f)
}

// Update runs change on the file under an exclusive lock and writes the
// result whole. Nothing is written when change fails.
func Update(home string, change func(*File) error) error {
	dir, err := OpenDir(home, true)
	if err != nil {
		return err
	}
	defer dir.Close()
	lfd, err := ownerfile.Open(int(dir.Fd()), lockName, unix.O_RDWR|unix.O_CREAT, 0o600)
	if err != nil {
		return fmt.Errorf("opening ~/.lnk/%s: %w", lockName, err)
	}
	defer unix.Close(lfd)
	if err := unix.Flock(lfd, unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking ~/.lnk/%s: %w", lockName, err)
	}
	f, err := OpenFile(dir)
	if err != nil {
		return err
	}
	file, err := Read(f)
	if f != nil {
		f.Close()
	}
	if err != nil {
		return err
	}
	defer file.Destroy()
	if err := change(file); err != nil {
		return err
	}
	data := file.Encode()
	defer clear(data)
	return writeAtomic(dir, data)
}

// writeAtomic writes data as secrets.toml in dir, 0600, atomically (the
// routine is internal/ownerfile: temp file, fsync, rename, folder fsync).
func writeAtomic(dir *os.File, data []byte) error {
	if err := ownerfile.WriteAtomic(int(dir.Fd()), FileName, data, ownerfile.Write{Mode: 0o600}); err != nil {
		return fmt.Errorf("writing ~/.lnk/%s: %w", FileName, err)
	}
	return nil
}
