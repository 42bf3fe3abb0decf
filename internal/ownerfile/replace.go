package ownerfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ErrSwapped is returned when the name a Replacement was put at no longer
// holds what it wrote: something else was renamed there meanwhile.
var ErrSwapped = errors.New("the file written was swapped for another before it was in place")

// Replacement is a file streamed into a fresh hidden O_EXCL file in a held
// folder, put at its name by Commit: what WriteAtomic does for bytes in
// memory, for a file too large to hold there. Written through its own
// descriptor, never reopened by name, so a link or file put at the hidden
// name meanwhile is never written through.
type Replacement struct {
	*os.File
	dir       int
	tmp, name string
}

// NewReplacement opens the hidden file beside name in dirfd (mode, or
// 0600 for 0).
func NewReplacement(dirfd int, name string, mode uint32) (*Replacement, error) {
	if err := oneName(name); err != nil {
		return nil, err
	}
	if mode == 0 {
		mode = 0o600
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := "." + name + ".tmp-" + hex.EncodeToString(rnd[:])
	fd, err := Open(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, mode)
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", name, err)
	}
	if err := unix.Fchmod(fd, mode); err != nil { // the umask may have narrowed it
		unix.Close(fd)
		unix.Unlinkat(dirfd, tmp, 0)
		return nil, fmt.Errorf("writing %s: %w", name, err)
	}
	return &Replacement{File: os.NewFile(uintptr(fd), tmp), dir: dirfd, tmp: tmp, name: name}, nil
}

// Commit fsyncs the file, renames it over name (a link there is replaced
// as itself, never followed), checks name now holds what was written, and
// fsyncs the folder. On error the hidden file is removed.
func (r *Replacement) Commit() error {
	var mine unix.Stat_t
	err := r.Sync()
	if err == nil {
		err = unix.Fstat(int(r.Fd()), &mine)
	}
	if err == nil {
		err = Rename(r.dir, r.tmp, r.dir, r.name, 0)
	}
	r.File.Close()
	if err != nil {
		unix.Unlinkat(r.dir, r.tmp, 0)
		return fmt.Errorf("writing %s: %w", r.name, err)
	}
	var there unix.Stat_t
	if err := unix.Fstatat(r.dir, r.name, &there, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("writing %s: %w", r.name, err)
	}
	if there.Dev != mine.Dev || there.Ino != mine.Ino {
		return fmt.Errorf("writing %s: %w", r.name, ErrSwapped)
	}
	return SyncDir(r.dir)
}

// Abort closes the file and removes it.
func (r *Replacement) Abort() {
	r.File.Close()
	unix.Unlinkat(r.dir, r.tmp, 0)
}
