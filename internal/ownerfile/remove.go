package ownerfile

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// MaxRemoveDepth bounds how deep RemoveAll goes: each level holds one
// descriptor, and a deeper tree is refused rather than exhausting them.
const MaxRemoveDepth = 128

// RemoveAll removes name in the held folder dirfd and, when it is a
// folder, everything in it: each folder opened from the one before with
// O_NOFOLLOW, so a link anywhere is removed as itself and never followed
// out of the tree, even one swapped in for a folder meanwhile (the open
// then fails, or opens what is now there from its parent's handle). A
// missing name is not an error.
func RemoveAll(dirfd int, name string) error {
	return removeAll(dirfd, name, 0)
}

func removeAll(dirfd int, name string, depth int) error {
	if err := oneName(name); err != nil {
		return err
	}
	err := unix.Unlinkat(dirfd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return fmt.Errorf("removing %s: %w", name, err)
	}
	if depth >= MaxRemoveDepth {
		return fmt.Errorf("removing %s: more than %d folders deep", name, MaxRemoveDepth)
	}
	// A pass removes what the folder held when read; one made meanwhile
	// leaves it not empty, and another pass follows (a few at most).
	for pass := 0; ; pass++ {
		if err := removeEntries(dirfd, name, depth); err != nil {
			return err
		}
		err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
		switch {
		case err == nil, errors.Is(err, unix.ENOENT):
			return nil
		case !errors.Is(err, unix.ENOTEMPTY) || pass == 3:
			return fmt.Errorf("removing %s: %w", name, err)
		}
	}
}

// removeEntries removes everything in the folder name in dirfd.
func removeEntries(dirfd int, name string, depth int) error {
	fd, err := Open(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("removing %s: %w", name, err)
	}
	d := os.NewFile(uintptr(fd), name)
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("reading %s: %w", name, err)
	}
	for _, n := range names {
		if err := removeAll(fd, n, depth+1); err != nil {
			return err
		}
	}
	return nil
}
