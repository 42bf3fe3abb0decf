package ownerfile

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ErrNotOwners is returned, wrapped, for a file or folder of the wrong
// type, another uid's, with more hard links than allowed, or with mode
// bits its rule forbids.
var ErrNotOwners = errors.New("not the owner's own")

// Rule is what an open file or folder must be.
type Rule struct {
	Type    uint32 // unix.S_IFREG or unix.S_IFDIR
	Forbid  uint32 // mode bits that must be clear: 0o077 (private), 0o022 (no write by others)
	OneLink bool   // a regular file must have exactly one hard link
}

// Private is a 0600-or-stricter regular file of the owner's; PrivateDir
// a 0700-or-stricter folder of the owner's.
var (
	Private    = Rule{Type: unix.S_IFREG, Forbid: 0o077}
	PrivateDir = Rule{Type: unix.S_IFDIR, Forbid: 0o077}
)

// Check refuses the open fd unless it is what r says, owned by this
// process's effective uid. The error names the type, uid or mode found.
func Check(fd int, r Rule) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	return check(&st, r)
}

func check(st *unix.Stat_t, r Rule) error {
	switch {
	case r.Type != 0 && st.Mode&unix.S_IFMT != r.Type:
		return fmt.Errorf("%w: not a %s", ErrNotOwners, map[uint32]string{unix.S_IFREG: "regular file", unix.S_IFDIR: "folder"}[r.Type])
	case st.Uid != uint32(os.Geteuid()):
		return fmt.Errorf("%w: owned by uid %d, not %d", ErrNotOwners, st.Uid, os.Geteuid())
	case r.OneLink && st.Nlink != 1:
		return fmt.Errorf("%w: %d hard links to it", ErrNotOwners, st.Nlink)
	case st.Mode&r.Forbid != 0:
		return fmt.Errorf("%w: mode %o is looser than Link allows (chmod %o fixes it)", ErrNotOwners, st.Mode&0o777, st.Mode&0o777&^r.Forbid)
	}
	return nil
}
