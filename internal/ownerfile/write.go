package ownerfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Write says how WriteAtomic writes.
type Write struct {
	Mode      uint32 // the file's mode; 0 is 0600
	NoReplace bool   // fail with EEXIST, keeping what is there, when name exists
	NoSync    bool   // skip both fsyncs (a file that lives no longer than its process)
}

// WriteAtomic writes data as name in the held folder dirfd: an O_EXCL
// temporary file beside it, fsync, renameat over name (or beside it with
// NoReplace), fsync of the folder. A reader, and the disk after a crash,
// sees the old file or the new one, never part of one. A link or
// non-regular file already at name is refused and nothing is written.
func WriteAtomic(dirfd int, name string, data []byte, w Write) (err error) {
	tmp, err := CreateTemp(dirfd, name, data, w)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			unix.Unlinkat(dirfd, tmp, 0)
		}
	}()
	var st unix.Stat_t
	switch serr := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case serr == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fmt.Errorf("%s is %w: Link will not replace it", name, ErrLink)
	case serr == nil && st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("%s: %w: not a regular file, Link will not replace it", name, ErrNotOwners)
	case serr != nil && !errors.Is(serr, unix.ENOENT):
		return serr
	}
	flags := uint(0)
	if w.NoReplace {
		flags = unix.RENAME_NOREPLACE
	}
	if err = Rename(dirfd, tmp, dirfd, name, flags); err != nil {
		return err
	}
	if w.NoSync {
		return nil
	}
	return SyncDir(dirfd)
}

// CreateTemp writes data to a fresh hidden file (O_EXCL, mode w.Mode or
// 0600) in dirfd, fsynced unless w.NoSync, and returns its name, for a
// caller that puts it in place itself (with Rename, or link). On error
// nothing is left behind.
func CreateTemp(dirfd int, name string, data []byte, w Write) (tmp string, err error) {
	mode := w.Mode
	if mode == 0 {
		mode = 0o600
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp = "." + name + ".tmp-" + hex.EncodeToString(rnd[:])
	fd, err := Open(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, mode)
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	if err = f.Chmod(os.FileMode(mode)); err == nil { // the umask may have narrowed it
		if _, err = f.Write(data); err == nil && !w.NoSync {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return "", fmt.Errorf("writing %s: %w", name, err)
	}
	return tmp, nil
}
