package move

import (
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/ownerfile"
)

// StaleAfter is how long a staging folder a receive left (one killed
// before it could remove it) stays in ~/Link/Agents/.moving.
const StaleAfter = 7 * 24 * time.Hour

// sweepStaging removes from .moving each folder named by an agent ID
// whose time is past StaleAfter, never through a link (RemoveAll opens
// each folder from its parent with O_NOFOLLOW). Anything else there is
// left as it is, and so is a folder a placing journal names (an undo
// needs it).
func sweepStaging(home string, moving int, now time.Time) error {
	names, err := readNames(moving)
	if err != nil {
		return err
	}
	for _, n := range names {
		if secrets.CheckAgentID(n) != nil {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(moving, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue
		}
		if now.Sub(time.Unix(st.Mtim.Unix())) < StaleAfter || journaled(home, moving, n) {
			continue
		}
		if err := ownerfile.RemoveAll(moving, n); err != nil {
			return err
		}
	}
	return nil
}
