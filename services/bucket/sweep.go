package bucket

import (
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// staleAfter is how long a pull's folder may stay: one a pull cut short
// (lnk killed) left, holding a backup's archives, is removed by the next
// pull once this old.
const staleAfter = 24 * time.Hour

// sweepPulls removes from the rclone HOME h each pull-* folder last
// changed more than staleAfter before now. A folder it can't remove is
// left, and the error returned: the pull goes on, named a new folder.
func sweepPulls(h *os.File, now time.Time) error {
	d, err := unix.FcntlInt(h.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(d), h.Name())
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		return err
	}
	var first error
	for _, n := range names {
		if !strings.HasPrefix(n, "pull-") {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(int(h.Fd()), n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		if now.Sub(time.Unix(st.Mtim.Unix())) < staleAfter {
			continue
		}
		if err := ownerfile.RemoveAll(int(h.Fd()), n); err != nil && first == nil {
			first = err
		}
	}
	return first
}
