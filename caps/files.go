package caps

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// openNoLinks opens path for reading through no symbolic link at all,
// refusing a file that isn't regular (the routine is internal/ownerfile).
func openNoLinks(path string) (*os.File, error) {
	f, err := ownerfile.OpenFilePath(path, ownerfile.Rule{})
	switch {
	case errors.Is(err, ownerfile.ErrLink):
		return nil, at(ErrSpecLink, quote(path))
	case errors.Is(err, ownerfile.ErrNotOwners):
		return nil, at(ErrSpecNotRegular, quote(path))
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
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

func writeFile(path string, data []byte, noReplace bool) error {
	dir, name := filepath.Split(path)
	dfd, err := ownerfile.OpenPath(filepath.Clean(dir), unix.O_RDONLY|unix.O_DIRECTORY)
	if errors.Is(err, ownerfile.ErrLink) {
		return at(ErrSymlink, quote(dir))
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	switch err := ownerfile.WriteAtomic(dfd, name, data, ownerfile.Write{Mode: 0o600, NoReplace: noReplace}); {
	case errors.Is(err, ownerfile.ErrLink):
		return at(ErrSpecLink, quote(path))
	case errors.Is(err, ownerfile.ErrNotOwners):
		return at(ErrSpecNotRegular, quote(path))
	case err != nil:
		return &os.PathError{Op: "write", Path: path, Err: err}
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
