package resolve

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// A write's temporary file is named tempPrefix and 32 lowercase hex
// digits (16 random bytes), beside its target. A broker killed mid-write
// (kill -9, a crash, a power cut) leaves it there: the target is never
// half-written, but the temporary file stays until [Root.SweepTemps]
// removes it.
const (
	tempPrefix  = ".lnk-tmp-"
	tempRandLen = 32
)

// TempMinAge is how old a leftover temporary file must be before a sweep
// removes it: far longer than any write takes (a write is capped at a few
// hundred MiB), so a write in flight in another broker on the same
// folder is never swept from under it.
const TempMinAge = 10 * time.Minute

// IsTempName reports whether name has exactly the shape of a write's
// temporary file.
func IsTempName(name string) bool {
	if len(name) != len(tempPrefix)+tempRandLen || name[:len(tempPrefix)] != tempPrefix {
		return false
	}
	for i := len(tempPrefix); i < len(name); i++ {
		if c := name[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// SweepOptions bound a sweep.
type SweepOptions struct {
	MinAge time.Duration // leave younger temporary files; 0 means TempMinAge
	Max    int           // names looked at in all; 0 means 20,000
}

// SweepTemps removes leftover temporary files of writes beneath the folder
// name, as the broker does for each writable root when it starts. It walks
// like [Root.Walk] (never through a link, each folder opened from the one
// holding it) and removes a name only when all of these hold:
//
//   - the name has exactly the temporary file's shape (".lnk-tmp-" and 32
//     lowercase hex digits);
//   - lstat says a regular file (a link, a folder, a FIFO is left alone)
//     with one name (a hard link to something else is left alone), owned
//     by this process's uid;
//   - it was last changed at least MinAge ago.
//
// The removal is unlinkat(2) of that one name in its folder's handle: it
// never follows a link and never leaves the folder. Between the lstat and
// the unlink, someone who can write the folder could put another file
// under that exact name; the sweep would then remove it (the link itself,
// never what it points to). Only a name made to look like Link's own
// temporary file can be lost that way.
//
// It returns how many files it removed. Past Max names it stops quietly,
// leaving the rest: a leftover is harmless (a hidden name no read
// returns as the target), only untidy.
func (r *Root) SweepTemps(name string, opt SweepOptions) (int, error) {
	if opt.MinAge <= 0 {
		opt.MinAge = TempMinAge
	}
	if opt.Max <= 0 {
		opt.Max = 20_000
	}
	before := time.Now().Add(-opt.MinAge).UnixNano()
	uid := uint32(os.Geteuid())
	removed := 0
	err := r.Walk(name, WalkOptions{Max: opt.Max}, func(e Entry) error {
		if e.Type != 0 || !IsTempName(e.Name) {
			return nil
		}
		ok, err := r.removeTemp(e.Path, before, uid)
		if ok {
			removed++
		}
		return err
	})
	if errors.Is(err, ErrTooLarge) {
		err = nil // stopped at the cap
	}
	return removed, err
}

// removeTemp removes the temporary file path if it passes every check of
// SweepTemps; a name that fails one is left and is no error.
func (r *Root) removeTemp(path string, before int64, uid uint32) (bool, error) {
	dir, base := split(path)
	dirfd, err := r.resolve("sweep", dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return false, ignoreGone(err)
	}
	defer unix.Close(dirfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, ignoreGone(fail("sweep", path, err))
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1 || st.Uid != uid || st.Mtim.Nano() > before {
		return false, nil
	}
	if err := unix.Unlinkat(dirfd, base, 0); err != nil {
		return false, ignoreGone(fail("sweep", path, err))
	}
	return true, nil
}

// ignoreGone drops the errors of a tree that changed while swept: a name
// or folder gone, or swapped for a link.
func ignoreGone(err error) error {
	var e *Error
	if errors.As(err, &e) && (e.Kind == ErrNotFound || e.Kind == ErrLink || e.Kind == ErrNotDir || e.Kind == ErrEscape) {
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
