package caps

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// ~/Link/History/Agents (security.txt, "Where Link keeps an agent's
// things"): the own folders (Agent/) and Homes of agents that were
// deleted or moved away, each entry named <name>-<8 hex of its ID>-<UTC
// time it arrived>, kept keep_moved (machine.toml; 30 days unsaid). Every
// sandbox hides ~/Link/History (compile.go). The sweep reads the folder
// once and removes only an entry whose name has that shape and whose time
// is past, a folder of the owner's, never through a link; anything else
// there is not Link's and stays.

// historyStamp is an entry's time, UTC to the nanosecond.
const historyStamp = "20060102T150405.000000000"

var historyEntry = regexp.MustCompile(`^([A-Za-z0-9_.-]{1,64})-([0-9a-f]{8})-([0-9]{8}T[0-9]{6}\.[0-9]{9})$`)

// historyName is the entry for agent name of ID id arriving at t.
func historyName(name, id string, t time.Time) string {
	return fmt.Sprintf("%s-%s-%s", name, id[:8], t.UTC().Format(historyStamp))
}

// parseHistoryName gives the time an entry named n arrived, or false for
// a name Link does not make.
func parseHistoryName(n string) (time.Time, bool) {
	m := historyEntry.FindStringSubmatch(n)
	if m == nil || !nameOK(m[1]) || strings.HasPrefix(m[1], ".") {
		return time.Time{}, false
	}
	t, err := time.Parse(historyStamp, m[3])
	return t, err == nil
}

// openHistory opens ~/Link/History/Agents (O_RDONLY), making ~/Link/History
// and it (0700) when missing, each through no link, the owner's, 0700.
func openHistory(l Layout) (int, error) {
	link, err := ownerfile.OpenPath(l.Link(), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", l.Link(), err)
	}
	defer unix.Close(link)
	h, err := ownerfile.MakeDir(link, "History", unix.O_PATH, ownerfile.PrivateDir)
	if err != nil {
		return -1, at(ErrLayout, quote(l.History())+": "+err.Error(), layoutHint(err))
	}
	defer unix.Close(h)
	a, err := ownerfile.MakeDir(h, "Agents", unix.O_RDONLY, ownerfile.PrivateDir)
	if err != nil {
		return -1, at(ErrLayout, quote(l.HistoryAgents())+": "+err.Error(), layoutHint(err))
	}
	return a, nil
}

// keptInHistory are the parts of an agent's folder History keeps: its own
// folder, its Home and the logs moved in beside them, each where it is a
// folder (a link is not its own and is removed as itself).
var keptInHistory = map[string]bool{"Agent": true, "Home": true, "logs": true}

// DeleteAgent moves agent name's folder to ~/Link/History/Agents as one
// rename, so the agent is gone from ~/Link/Agents at once, then removes
// from the entry everything but Agent/ and Home (its Config/ and its
// harnesses' homes, where their keys are), and moves its logs
// (~/.lnk/agents/<name>/logs) into the entry, so an agent made later with
// the name starts with none. Its rclone children's HOME
// (~/.lnk/agents/<id>/rclone) is removed. It returns the entry's path.
func DeleteAgent(home, name string) (string, error) {
	l, a, err := agentIn(home, name)
	if err != nil {
		return "", err
	}
	hist, err := openHistory(l)
	if err != nil {
		return "", err
	}
	defer unix.Close(hist)
	agents, err := ownerfile.OpenPath(l.Agents(), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", l.Agents(), err)
	}
	defer unix.Close(agents)
	entry := historyName(name, a.ID, time.Now())
	dest := l.HistoryAgents() + "/" + entry
	// The agent leaves ~/Link/Agents in one rename, to a staging name the
	// sweep finishes should this lnk die before the entry is whole.
	staging := stagingPrefix + entry
	if err := ownerfile.Rename(agents, name, hist, staging, unix.RENAME_NOREPLACE); err != nil {
		return "", &os.PathError{Op: "move", Path: l.AgentDir(name), Err: err}
	}
	if err := moveLogs(l, name, hist, staging); err != nil {
		Notice(fmt.Sprintf("agent %s: its logs stay in %s: %v", name, l.LogsDir(name), err))
	}
	if err := finishEntry(hist, staging, entry); err != nil {
		return dest, fmt.Errorf("agent %s moved to %s, but removing its settings and harnesses' homes there failed (History's next sweep tries again): %w", name, l.HistoryAgents()+"/"+staging, err)
	}
	if err := removeRcloneHome(l, a.ID); err != nil {
		return dest, fmt.Errorf("agent %s moved to %s, but removing %s/agents/%s/%s failed (it holds no key): %w", name, dest, l.Settings(), a.ID, RcloneHome, err)
	}
	return dest, nil
}

// removeRcloneHome removes ~/.lnk/agents/<id>/rclone, the agent's
// rclone children's HOME, never following a link (one in its place is
// removed as itself); none is no error.
func removeRcloneHome(l Layout, id string) error {
	dir, err := ownerfile.OpenPath(l.Settings()+"/agents/"+id, unix.O_PATH|unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	return ownerfile.RemoveAll(dir, RcloneHome)
}

// stagingPrefix names an entry being made: the agent's whole folder,
// before its Config/ and harnesses' homes are removed.
const stagingPrefix = ".deleting-"

// finishEntry removes from the staging entry what History does not keep
// and gives it its name.
func finishEntry(hist int, staging, entry string) error {
	if err := pruneEntry(hist, staging); err != nil {
		return err
	}
	return ownerfile.Rename(hist, staging, hist, entry, unix.RENAME_NOREPLACE)
}

// pruneEntry removes from the entry everything History does not keep.
func pruneEntry(hist int, entry string) error {
	fd, err := ownerfile.Open(hist, entry, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	d := os.NewFile(uintptr(fd), entry)
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		var st unix.Stat_t
		if keptInHistory[n] && unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			continue
		}
		if err := ownerfile.RemoveAll(fd, n); err != nil {
			return err
		}
	}
	return nil
}

// moveLogs moves ~/.lnk/agents/<name>/logs into the entry as logs/, and
// removes ~/.lnk/agents/<name> when nothing else is left in it.
func moveLogs(l Layout, name string, hist int, entry string) error {
	dir, err := ownerfile.OpenPath(l.Settings()+"/agents/"+name, unix.O_PATH|unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	efd, err := ownerfile.OpenDir(hist, entry, unix.O_PATH)
	if err != nil {
		return err
	}
	defer unix.Close(efd)
	var st unix.Stat_t
	if unix.Fstatat(dir, "logs", &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := ownerfile.Rename(dir, "logs", efd, "logs", unix.RENAME_NOREPLACE); err != nil {
			return err
		}
	}
	agents, err := ownerfile.OpenPath(l.Settings()+"/agents", unix.O_PATH|unix.O_DIRECTORY)
	if err == nil {
		unix.Unlinkat(agents, name, unix.AT_REMOVEDIR) // only when empty: ENOTEMPTY leaves the rest
		unix.Close(agents)
	}
	return nil
}

// SweepHistory removes the entries of ~/Link/History/Agents that arrived
// more than keep before now, and returns their names. An entry a delete
// left staged (its lnk died) is finished first: its Config/ and
// harnesses' homes removed, its name given. An entry whose name
// Link does not make, or that is a link or not the owner's folder, is
// left where it is; one that fails to be removed is named in the error,
// and the others are still swept.
func SweepHistory(home string, keep time.Duration, now time.Time) ([]string, error) {
	if keep <= 0 {
		return nil, fmt.Errorf("keep_moved %v is not a positive duration", keep)
	}
	l, err := layoutFor(home)
	if err != nil {
		return nil, err
	}
	fd, err := ownerfile.OpenPath(l.HistoryAgents(), unix.O_RDONLY|unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, at(ErrLayout, quote(l.HistoryAgents())+": "+err.Error(), layoutHint(err))
	}
	d := os.NewFile(uintptr(fd), l.HistoryAgents())
	defer d.Close()
	if err := ownerfile.Check(fd, ownerfile.PrivateDir); err != nil {
		return nil, at(ErrLayout, quote(l.HistoryAgents())+": "+err.Error(), layoutHint(err))
	}
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var swept []string
	var errs []error
	for _, n := range names {
		staged, isStaging := strings.CutPrefix(n, stagingPrefix)
		t, ok := parseHistoryName(staged)
		if !ok || !isStaging && now.Sub(t) < keep {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != uint32(os.Geteuid()) {
			continue // not a folder Link made: left alone
		}
		if isStaging { // a delete cut short: its keys go now, the rest is kept its time
			if err := finishEntry(fd, n, staged); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", n, err))
			}
			if now.Sub(t) < keep {
				continue
			}
			n = staged
		}
		if err := ownerfile.RemoveAll(fd, n); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n, err))
			continue
		}
		swept = append(swept, n)
	}
	return swept, errors.Join(errs...)
}

// movedDir is where an older Link kept what left: ~/Link/Agents/.moved.
const movedDir = ".moved"

// MigrateMoved moves each folder an older Link kept in
// ~/Link/Agents/.moved into ~/Link/History/Agents, named as History
// names its entries (the time is now's, so each is kept keep_moved from
// here), then removes .moved when it is empty. A link there, in place of
// .moved or of an entry, is left as it is and named in the error.
func MigrateMoved(home string, now time.Time) ([]string, error) {
	l, err := layoutFor(home)
	if err != nil {
		return nil, err
	}
	agents, err := ownerfile.OpenPath(l.Agents(), unix.O_PATH|unix.O_DIRECTORY)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer unix.Close(agents)
	mfd, err := ownerfile.Open(agents, movedDir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, at(ErrLayout, quote(l.Agents()+"/"+movedDir)+": "+err.Error(), layoutHint(err))
	}
	moved := os.NewFile(uintptr(mfd), movedDir)
	defer moved.Close()
	if err := ownerfile.Check(mfd, ownerfile.Rule{Type: unix.S_IFDIR}); err != nil {
		return nil, at(ErrLayout, quote(l.Agents()+"/"+movedDir)+": "+err.Error(), layoutHint(err))
	}
	names, err := moved.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	hist, err := openHistory(l)
	if err != nil {
		return nil, err
	}
	defer unix.Close(hist)
	var out []string
	var errs []error
	for i, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(mfd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != uint32(os.Geteuid()) {
			errs = append(errs, fmt.Errorf("%s/%s is not a folder of yours: left there", movedDir, quote(n)))
			continue
		}
		name, id := legacyAgent(mfd, n)
		entry := historyName(name, id, now.Add(time.Duration(i)))
		if err := ownerfile.Rename(mfd, n, hist, entry, unix.RENAME_NOREPLACE); err != nil {
			errs = append(errs, fmt.Errorf("%s/%s: %w", movedDir, quote(n), err))
			continue
		}
		out = append(out, entry)
	}
	if len(errs) == 0 {
		unix.Unlinkat(agents, movedDir, unix.AT_REMOVEDIR) // only when empty
	}
	return out, errors.Join(errs...)
}

// legacyAgent names an entry of .moved by its Config/agent.toml where that
// reads, else by the entry's own name ("moved" where that is not a name)
// and a random tag.
func legacyAgent(moved int, n string) (name, id string) {
	name, id = "moved", NewID()
	if nameOK(n) && !strings.HasPrefix(n, ".") {
		name = n
	}
	cfg, err := ownerfile.OpenDir(moved, n+"/Config", unix.O_PATH)
	if err != nil {
		return name, id
	}
	defer unix.Close(cfg)
	data, err := ownerfile.ReadFile(cfg, "agent.toml", ownerfile.Rule{}, MaxSpecSize)
	if err != nil {
		return name, id
	}
	var a Agent
	if _, err := toml.Decode(string(data), &a); err == nil && idPattern.MatchString(a.ID) && nameOK(a.Name) && !strings.HasPrefix(a.Name, ".") {
		return a.Name, a.ID
	}
	return name, id
}
