package move

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/keybroker/secrets"
)

// The placing journals there are, found without the agents: a receive of
// an agent new here killed before its agent.toml existed left a journal
// no lookup by name reaches (lnk agent start and status load the agent
// first). lnk agent list names each; lnk agent recover NAME undoes one by
// the name its journal recorded.

// ErrNameCutShort refuses making an agent (a receive, lnk agent create)
// of a name whose placing cut short, or under way, is another agent's.
var ErrNameCutShort = errors.New("move: a receive or restore of an agent of that name was cut short here, or is under way, and is not undone")

// Journal is a placing journal in ~/.lnk/moving, as its head names it.
type Journal struct {
	File string // its name in ~/.lnk/moving
	Kind string // "receive" or "restore"
	ID   string
	Name string
	New  bool // a receive of an agent new here: its undo removes the agent
	// UnderWay: its move's lock is held, so a receive or restore places
	// it now; else a kill cut it short.
	UnderWay bool
	// Err: the journal cannot be read (then only File is known). It is
	// never left out: what it names cannot be told.
	Err error
}

// Journals lists every placing journal in ~/.lnk/moving, by file name.
func Journals(home string) ([]Journal, error) {
	dir, err := movingDir(home)
	if err != nil {
		return nil, fmt.Errorf("~/.lnk/moving: %w", err)
	}
	defer unix.Close(dir)
	names, err := readNames(dir)
	if err != nil {
		return nil, fmt.Errorf("reading ~/.lnk/moving: %w", err)
	}
	sort.Strings(names)
	var out []Journal
	for _, n := range names {
		id, ok := strings.CutSuffix(n, ".placing")
		if !ok {
			continue
		}
		j := Journal{File: n}
		if err := secrets.CheckAgentID(id); err != nil {
			j.Err = fmt.Errorf("%w: its name is not <agent id>.placing", ErrJournal)
			out = append(out, j)
			continue
		}
		rec, err := readHead(dir, id)
		if err != nil {
			j.Err = err
			out = append(out, j)
			continue
		}
		j.Kind, j.ID, j.Name, j.New = rec.Kind, rec.ID, rec.Name, rec.New
		unlock, err := lockMove(home, id)
		switch {
		case errors.Is(err, ErrBusy):
			j.UnderWay = true
		case err != nil:
			j.Err = err
		default:
			unlock()
		}
		out = append(out, j)
	}
	return out, nil
}

// readHead reads agent id's journal in dir, strictly and whole, changing
// nothing, and returns its head.
func readHead(dir int, id string) (*journalHead, error) {
	fd, err := openJournal(dir, journalName(id), unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	b, err := readAll(fd, journalName(id))
	if err != nil {
		return nil, err
	}
	rec, err := parseJournal(b)
	if err != nil {
		return nil, err
	}
	if rec.Head.ID != id {
		return nil, fmt.Errorf("%w: ~/.lnk/moving/%s names agent %s", ErrJournal, journalName(id), rec.Head.ID)
	}
	return &rec.Head, nil
}

// JournalsOf are the journals of js whose head names agent name (its
// recorded name), and those that cannot be read, which may.
func JournalsOf(js []Journal, name string) []Journal {
	var out []Journal
	for _, j := range js {
		if j.Err != nil || j.Name == name {
			out = append(out, j)
		}
	}
	return out
}

// CheckNameFree refuses, with ErrNameCutShort, making agent name (id:
// the one being made, "" for a new ID) while a journal of another agent
// names it, or a journal Link cannot read is there: its undo removes
// what it made under that name, so another agent made there first would
// be two of one name, or be removed.
func CheckNameFree(home, name, id string) error {
	js, err := Journals(home)
	if err != nil {
		return err
	}
	for _, j := range JournalsOf(js, name) {
		switch {
		case j.Err != nil:
			return fmt.Errorf("%w: ~/.lnk/moving/%s cannot be read (%v)", ErrNameCutShort, j.File, j.Err)
		case j.ID != id:
			return fmt.Errorf("%w: a %s of agent %s (id %s), %s", ErrNameCutShort, j.Kind, j.Name, j.ID, j.state())
		}
	}
	return nil
}

func (j *Journal) state() string {
	if j.UnderWay {
		return "under way"
	}
	return "cut short"
}
