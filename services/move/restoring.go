package move

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerfile"
)

// restoringPrefix names a restore's folder in ~/Link/Agents:
// .restoring-<random>, made new for each restore.
const restoringPrefix = ".restoring-"

// newRestoring makes a fresh ~/Link/Agents/.restoring-<random> (0700, out
// of every agent's reach: no sandbox is given ~/Link/Agents itself),
// after removing those a restore cut short left more than StaleAfter
// ago. Its staging's remove removes it.
func newRestoring(home string) (*staging, error) {
	l := caps.Layout{Home: home}
	agents, err := ownerfile.OpenPath(l.Agents(), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", l.Agents(), err)
	}
	if err := sweepRestoring(home, agents, time.Now()); err != nil {
		unix.Close(agents)
		return nil, err
	}
	var rnd [16]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		unix.Close(agents)
		return nil, err
	}
	name := restoringPrefix + hex.EncodeToString(rnd[:])
	// Made here, never one that was there: EEXIST is an error.
	if err := unix.Mkdirat(agents, name, 0o700); err != nil {
		unix.Close(agents)
		return nil, fmt.Errorf("making %s/%s: %w", l.Agents(), name, err)
	}
	fd, err := ownerfile.OpenDir(agents, name, unix.O_PATH)
	if err == nil {
		if err = ownerfile.Check(fd, ownerfile.PrivateDir); err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		ownerfile.RemoveAll(agents, name)
		unix.Close(agents)
		return nil, fmt.Errorf("opening %s/%s: %w", l.Agents(), name, err)
	}
	return &staging{moving: agents, agents: -1, id: name, rel: name, fd: fd, pfd: -1, buf: make([]byte, copyBuf)}, nil
}

// SweepRestoring removes from ~/Link/Agents each .restoring-* folder a
// restore cut short left more than StaleAfter ago (lnk agent start calls
// it too). A missing ~/Link/Agents is nothing to sweep.
func SweepRestoring(home string) error {
	agents, err := ownerfile.OpenPath(caps.Layout{Home: home}.Agents(), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	defer unix.Close(agents)
	return sweepRestoring(home, agents, time.Now())
}

// sweepRestoring removes the stale .restoring-* folders of agents, each
// never through a link (RemoveAll opens each folder from its parent with
// O_NOFOLLOW). A link or file by such a name is removed as itself; one a
// placing journal names is kept (an undo needs it).
func sweepRestoring(home string, agents int, now time.Time) error {
	names, err := readNames(agents)
	if err != nil {
		return err
	}
	for _, n := range names {
		if !strings.HasPrefix(n, restoringPrefix) {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(agents, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue
		}
		if now.Sub(time.Unix(st.Mtim.Unix())) < StaleAfter || journaled(home, agents, n) {
			continue // maybe a restore under way, or one to undo
		}
		if err := ownerfile.RemoveAll(agents, n); err != nil {
			return err
		}
	}
	return nil
}
