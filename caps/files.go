package caps

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

// openNoLinks opens path for reading through no symbolic link at all
// (openat2 RESOLVE_NO_SYMLINKS), refusing a file that isn't regular.
func openNoLinks(path string) (*os.File, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, at(ErrSpecLink, quote(path))
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, at(ErrSpecNotRegular, quote(path))
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ReadSpecFile reads and parses a spec file, refusing one that is a link,
// lies behind one, isn't a regular file or is too big.
func ReadSpecFile(path string) (*Spec, error) {
	f, err := openNoLinks(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSpecSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return ParseSpec(path, data)
}

// readSpecIfAny is ReadSpecFile, with a missing file an empty spec.
func readSpecIfAny(path string) (*Spec, error) {
	s, err := ReadSpecFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Spec{}, nil
	}
	return s, err
}

// writeFileAtomic writes data as path (mode 0600): a temp file beside it,
// fsync, rename over, fsync the folder. The folder is reached through no
// link, and a link or non-regular file already at path is refused: nothing
// is written then.
func writeFileAtomic(path string, data []byte) error {
	return writeFile(path, data, false)
}

// writeFileNew is writeFileAtomic where nothing is at path yet: a file
// there already (made meanwhile) is kept, and the error is EEXIST.
func writeFileNew(path string, data []byte) error {
	return writeFile(path, data, true)
}

func writeFile(path string, data []byte, noReplace bool) (err error) {
	dir, name := filepath.Split(path)
	dfd, err := unix.Openat2(unix.AT_FDCWD, filepath.Clean(dir), &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ELOOP) {
		return at(ErrSymlink, quote(dir))
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	switch err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return at(ErrSpecLink, quote(path))
	case err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG:
		return at(ErrSpecNotRegular, quote(path))
	case err != nil && !errors.Is(err, unix.ENOENT):
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := "." + name + ".tmp-" + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &os.PathError{Op: "create", Path: filepath.Join(dir, tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	defer func() {
		if err != nil {
			unix.Unlinkat(dfd, tmp, 0)
		}
	}()
	if _, err = f.Write(data); err == nil {
		if err = f.Chmod(0o600); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if noReplace {
		if err = unix.Renameat2(dfd, tmp, dfd, name, unix.RENAME_NOREPLACE); err != nil {
			return &os.PathError{Op: "rename", Path: path, Err: err}
		}
	} else if err = unix.Renameat(dfd, tmp, dfd, name); err != nil {
		return &os.PathError{Op: "rename", Path: path, Err: err}
	}
	if err = unix.Fsync(dfd); err != nil {
		return &os.PathError{Op: "fsync", Path: dir, Err: err}
	}
	return nil
}

// mkdirPrivate makes path (0700) if missing and checks it is a folder
// reached through no link.
func mkdirPrivate(path string) error {
	if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	kind, err := Resolve(path)
	if err != nil {
		return err
	}
	if kind != KindDir {
		return at(ErrSpecNotRegular, quote(path), "it should be a folder")
	}
	return nil
}
