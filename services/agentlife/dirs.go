package agentlife

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
)

// stateDir opens ~/.lnk/agents/<agent id>, made 0700 where missing.
func stateDir(home, id string) (*os.File, error) {
	return ownerdir.Open(home, ".lnk", "agents", id)
}

// agentsDir opens ~/.lnk/agents.
func agentsDir(home string) (*os.File, error) {
	return ownerdir.Open(home, ".lnk", "agents")
}

// logsDir opens ~/.lnk/agents/<agent>/logs.
func logsDir(home, name string) (*os.File, error) {
	return ownerdir.Open(home, ".lnk", "agents", name, "logs")
}

// everStarted says whether ~/.lnk/agents/<agent id> exists (a link in
// its place counts, so stateDir refuses it), without making it.
func everStarted(home, id string) (bool, error) {
	d, err := agentsDir(home)
	if err != nil {
		return false, err
	}
	defer d.Close()
	var st unix.Stat_t
	err = unix.Fstatat(int(d.Fd()), id, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	return err == nil, err
}
