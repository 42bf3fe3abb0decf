package caps

import (
	"errors"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// ~/.lnk/agents/<agent>/paused and paused.quiet (security.txt, "Where
// Link keeps an agent's things"): an agent paused for a move's switch,
// and what carries its connections saying it stopped taking messages. A
// start removes both.

// Pause files.
const (
	pausedFile = "paused"
	quietFile  = "paused.quiet"
)

// MarkPaused writes agent name's paused, and paused.quiet when quiet (no
// connection of its had to be told).
func MarkPaused(home, name string, quiet bool) error {
	d, err := agentSettingsDir(home, name)
	if err != nil {
		return err
	}
	defer unix.Close(d)
	if err := ownerfile.WriteAtomic(d, pausedFile, nil, ownerfile.Write{}); err != nil {
		return err
	}
	if quiet {
		return ownerfile.WriteAtomic(d, quietFile, nil, ownerfile.Write{})
	}
	return nil
}

// Paused reports whether agent name is paused, and quiet.
func Paused(home, name string) (paused, quiet bool, err error) {
	d, err := agentSettingsDir(home, name)
	if err != nil {
		return false, false, err
	}
	defer unix.Close(d)
	var st unix.Stat_t
	for _, f := range []struct {
		name string
		dst  *bool
	}{{pausedFile, &paused}, {quietFile, &quiet}} {
		switch err := unix.Fstatat(d, f.name, &st, unix.AT_SYMLINK_NOFOLLOW); {
		case err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Uid == uint32(unix.Geteuid()):
			*f.dst = true
		case err == nil:
			return false, false, errors.New("~/.lnk/agents/" + name + "/" + f.name + " is not a file of the owner's: remove it")
		case !errors.Is(err, unix.ENOENT):
			return false, false, err
		}
	}
	return paused, quiet, nil
}

// Unpause removes agent name's paused and paused.quiet.
func Unpause(home, name string) error {
	d, err := agentSettingsDir(home, name)
	if err != nil {
		return err
	}
	defer unix.Close(d)
	for _, f := range []string{pausedFile, quietFile} {
		if err := unix.Unlinkat(d, f, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
	}
	return nil
}

// agentSettingsDir opens ~/.lnk/agents/<name> (0700, through no link).
func agentSettingsDir(home, name string) (int, error) {
	if err := CheckName(name); err != nil {
		return -1, err
	}
	f, err := ownerdir.Open(home, ".lnk", "agents", name)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	return unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
}
