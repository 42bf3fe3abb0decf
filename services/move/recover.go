package move

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// placingMark names the file in a staging folder that a placing began
// from it (its content, the agent's ID): a sweep never removes a staging
// folder whose agent has a journal, since an undo needs what it holds.
const placingMark = ".placing"

// ErrPlacingLeft says a placing was cut short and is not undone yet.
var ErrPlacingLeft = errors.New("move: a receive or restore of this agent was cut short while it put things in place")

// Recovered says what a recovery undid.
type Recovered struct {
	Kind  string // "receive" or "restore"
	Name  string // the agent's name in the journal
	New   bool   // the agent was new here: it is removed
	Steps int    // the steps undone
}

// Recover undoes agent id's placing that a kill cut short, if its journal
// (~/.lnk/moving/<id>.placing) is there: each step journaled, last first,
// then the agent when it was new here, then the journal and the staging
// folder. stopped must return nil only while the agent is stopped (name:
// the journal's). It returns nil, nil with no journal; ErrBusy while a
// move, backup or restore of the agent runs (whose journal is its own,
// not one cut short).
func Recover(home, id string, stopped func(name string) error) (*Recovered, error) {
	unlock, err := lockMove(home, id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return recoverLocked(home, id, stopped)
}

// recoverLocked is Recover, under the move's lock.
func recoverLocked(home, id string, stopped func(name string) error) (*Recovered, error) {
	j, rec, err := readJournal(home, id)
	if err != nil || j == nil {
		return nil, err
	}
	h := rec.Head
	if stopped == nil {
		j.close()
		return nil, fmt.Errorf("%w: no check that agent %s is stopped", ErrPlacingLeft, h.Name)
	}
	if err := stopped(h.Name); err != nil {
		j.close()
		return nil, err
	}
	agents, err := ownerfile.OpenPath(caps.Layout{Home: home}.Agents(), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		j.close()
		return nil, fmt.Errorf("opening ~/Link/Agents: %w", err)
	}
	defer unix.Close(agents)
	p := &placing{home: home, head: h, j: j, pause: -1}
	open := rec.Steps[:len(rec.Steps)-rec.Undone]
	for _, r := range open {
		s := step{src: -1, dst: -1, rec: r}
		if r.Op == opRename {
			if s.src, err = openRecorded(agents, string(r.Src), r.SrcDir); err == nil {
				s.dst, err = openRecorded(agents, string(r.Dst), r.DstDir)
			}
		} else if r.Op == opMkdir {
			s.dst, err = openRecorded(agents, string(r.Dst), r.DstDir)
		}
		p.steps = append(p.steps, s)
		if err != nil {
			p.closeSteps()
			j.close()
			return nil, fmt.Errorf("%w: step %d: %w", ErrPlacingLeft, *r.Step, err)
		}
	}
	if err := p.undoAll(); err != nil {
		return nil, fmt.Errorf("%w; undoing it: %w", ErrPlacingLeft, err)
	}
	if err := removeStaging(agents, h.Staging); err != nil {
		return nil, err
	}
	return &Recovered{Kind: h.Kind, Name: h.Name, New: h.New, Steps: len(open)}, nil
}

// String says what was undone, one line.
func (r *Recovered) String() string {
	s := fmt.Sprintf("a %s of agent %s cut short while it put things in place is undone (%d steps): the agent is as it was before it", r.Kind, r.Name, r.Steps)
	if r.New {
		s = fmt.Sprintf("a %s of agent %s cut short while it put things in place is undone: the agent, new here, is removed", r.Kind, r.Name)
	}
	return s
}

// openRecorded opens the folder rel below ~/Link/Agents through no link,
// refusing one that is not the folder the journal names.
func openRecorded(agents int, rel string, want *fileID) (int, error) {
	fd, err := ownerfile.OpenDir(agents, rel, unix.O_PATH)
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", rel, err)
	}
	if got, err := idOf(fd, ""); err != nil || got != *want {
		unix.Close(fd)
		if err == nil {
			err = errors.New("another folder than the one the journal names")
		}
		return -1, fmt.Errorf("%s: %w", rel, err)
	}
	return fd, nil
}

// removeStaging removes a recovered placing's staging folder (rel below
// ~/Link/Agents, as the journal's head checked it), if still there, and
// a receive's .moving it left empty.
func removeStaging(agents int, rel string) error {
	dir, name := agents, rel
	if parent, base, ok := strings.Cut(rel, "/"); ok {
		fd, err := ownerfile.OpenDir(agents, parent, unix.O_RDONLY)
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		dir, name = fd, base
	}
	if err := ownerfile.RemoveAll(dir, name); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	if err := ownerfile.SyncDir(dir); err != nil {
		return err
	}
	if dir != agents && strings.HasPrefix(rel, ".moving/") {
		removeMovingIfEmpty(agents, dir) // a receive's: none left empty
	}
	return nil
}

// removeNewAgent removes the agent a receive made here, should its
// placing be undone: its folder in ~/Link/Agents, and its folder in
// ~/.lnk/agents when there was none before. An agent of that name with
// another ID is not the one it made, and is refused, never removed.
func removeNewAgent(home string, h *journalHead) error {
	// Its folder without an agent.toml (killed while it was made) is
	// its own: never made an agent again with a new ID here.
	a, err := caps.LoadAgentAsIs(home, h.Name)
	switch {
	case err == nil && a.ID != h.ID:
		return fmt.Errorf("%w: agent %s here has ID %s, not the %s it made", ErrPlacingLeft, h.Name, a.ID, h.ID)
	case err != nil && !errors.Is(err, caps.ErrNoAgent):
		return err
	}
	l := caps.Layout{Home: home}
	agents, err := ownerfile.OpenPath(l.Agents(), unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(agents)
	if err := ownerfile.RemoveAll(agents, h.Name); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	if err := ownerfile.SyncDir(agents); err != nil {
		return err
	}
	if !h.SettingsNew {
		return nil
	}
	d, err := ownerdir.Open(home, ".lnk", "agents")
	if err != nil {
		return err
	}
	defer d.Close()
	if err := ownerfile.RemoveAll(int(d.Fd()), h.Name); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return ownerfile.SyncDir(int(d.Fd()))
}

// PlacingLeft reports whether agent id has a placing cut short, not yet
// undone (lnk agent status tells the owner); an error when that cannot
// be learned.
func PlacingLeft(home, id string) (bool, error) {
	if err := secrets.CheckAgentID(id); err != nil {
		return false, err
	}
	dir, err := movingDir(home)
	if err != nil {
		return false, err
	}
	defer unix.Close(dir)
	return hasJournal(dir, id)
}

// journaled reports whether the staging folder name in dir is one a
// journal names (its mark, and its agent's journal there): a sweep keeps
// it. What cannot be learned keeps it too.
func journaled(home string, dir int, name string) bool {
	fd, err := ownerfile.OpenDir(dir, name, unix.O_PATH)
	if err != nil {
		return !errors.Is(err, unix.ENOENT) && !errors.Is(err, ownerfile.ErrLink)
	}
	defer unix.Close(fd)
	id, err := ownerfile.ReadFile(fd, placingMark, ownerfile.Private, 64)
	if errors.Is(err, unix.ENOENT) {
		return false
	}
	if err != nil {
		return true
	}
	left, err := PlacingLeft(home, string(id))
	return left || err != nil
}
