package secrets

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
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
	if create {
		if err := unix.Mkdirat(hfd, ".lnk", 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return nil, fmt.Errorf("making ~/.lnk: %w", err)
		}
	}
	fd, err := unix.Openat(hfd, ".lnk", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return nil, fmt.Errorf("%w: ~/.lnk is a link or not a folder", ErrUnsafe)
		}
		return nil, fmt.Errorf("opening ~/.lnk: %w", err)
	}
	d := os.NewFile(uintptr(fd), filepath.Join(home, ".lnk"))
	if err := checkOwned(fd, true); err != nil {
		d.Close()
		return nil, fmt.Errorf("~/.lnk: %w", err)
	}
	return d, nil
}

// checkOwned refuses what isn't the owner's, or is open to others.
func checkOwned(fd int, dir bool) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	want := uint32(unix.S_IFREG)
	if dir {
		want = unix.S_IFDIR
	}
	switch {
	case st.Mode&unix.S_IFMT != want:
		return fmt.Errorf("%w: not a regular file", ErrUnsafe)
	case st.Uid != uint32(os.Geteuid()):
		return fmt.Errorf("%w: owned by uid %d, not you", ErrUnsafe, st.Uid)
	case st.Mode&0o077 != 0:
		return fmt.Errorf("%w: mode %o lets others in (chmod %o fixes it)", ErrUnsafe, st.Mode&0o777, map[bool]int{true: 0o700, false: 0o600}[dir])
	}
	return nil
}

// OpenFile opens secrets.toml in dir for reading, never through a link,
// without blocking on a fifo. A missing file is (nil, nil).
func OpenFile(dir *os.File) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), FileName, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%w: ~/.lnk/%s is a link", ErrUnsafe, FileName)
	}
	if err != nil {
		return nil, fmt.Errorf("opening ~/.lnk/%s: %w", FileName, err)
	}
	if err := checkOwned(fd, false); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("~/.lnk/%s: %w", FileName, err)
	}
	return os.NewFile(uintptr(fd), FileName), nil
}

// Read parses an open secrets file from its start.
func Read(f *os.File) (*File, error) {
	if f == nil {
		return &File{Secrets: map[string]*Entry{}}, nil
	}
	if err := checkOwned(int(f.Fd()), false); err != nil {
		return nil, err
	}
	data := make([]byte, MaxFileSize+1)
	n, err := readAllAt(f, data)
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
	lfd, err := unix.Openat(int(dir.Fd()), lockName, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
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

// writeAtomic writes data as secrets.toml in dir: a 0600 temporary file
// beside it, fsync, rename over, fsync the folder.
func writeAtomic(dir *os.File, data []byte) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := ".secrets.toml." + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(int(dir.Fd()), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("writing ~/.lnk/%s: %w", FileName, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	ok := false
	defer func() {
		if !ok {
			f.Close()
			unix.Unlinkat(int(dir.Fd()), tmp, 0)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing ~/.lnk/%s: %w", FileName, err)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := unix.Renameat(int(dir.Fd()), tmp, int(dir.Fd()), FileName); err != nil {
		return fmt.Errorf("replacing ~/.lnk/%s: %w", FileName, err)
	}
	ok = true
	return dir.Sync()
}
