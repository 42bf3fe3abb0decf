package move

import (
	"errors"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// ~/Link/Agents/.moving holds receives' staging folders. A receive
// removes it when it leaves it empty, so none stays behind; receives of
// two agents may run at once, so each holds a shared flock on .moving
// from its open to its end, and the one that removes it holds it
// exclusively, taken without waiting: it is removed only while no other
// receive holds it. One that opened it just as it went finds it
// unlinked (no links left) once it holds its lock, and makes it again.
// Two receives ending at once may each find the other's lock and leave
// .moving empty: the next receive's end removes it.

// openMoving makes or opens .moving in agents (0700, the owner's, never
// through a link) and holds a shared lock on it, closed with its handle.
func openMoving(agents int) (int, error) {
	for try := 0; ; try++ {
		fd, err := ownerfile.MakeDir(agents, ".moving", unix.O_RDONLY, ownerfile.PrivateDir)
		if err != nil {
			return -1, err
		}
		if err := unix.Flock(fd, unix.LOCK_SH); err != nil {
			unix.Close(fd)
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if st.Nlink > 0 {
			return fd, nil
		}
		unix.Close(fd) // removed by another receive's end meanwhile
		if try == 3 {
			return -1, errors.New(".moving was removed each time it was made")
		}
	}
}

// removeMovingIfEmpty removes .moving from agents when it is still the
// folder moving holds (same device and inode, the owner's, reached
// through no link: fstatat AT_SYMLINK_NOFOLLOW, and rmdir of a link
// fails), no other receive holds it, and it is empty (rmdir removes
// nothing else). What is left otherwise is left as it is: a staging
// folder a journal names, another receive's, anything not Link's.
func removeMovingIfEmpty(agents, moving int) {
	if unix.Flock(moving, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return
	}
	var held, there unix.Stat_t
	if unix.Fstat(moving, &held) != nil || unix.Fstatat(agents, ".moving", &there, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return
	}
	if there.Mode&unix.S_IFMT != unix.S_IFDIR || there.Dev != held.Dev || there.Ino != held.Ino || int(there.Uid) != unix.Geteuid() {
		return
	}
	if unix.Unlinkat(agents, ".moving", unix.AT_REMOVEDIR) == nil {
		ownerfile.SyncDir(agents)
	}
}
