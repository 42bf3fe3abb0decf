package caps

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// ~/.lnk/moved/<id>.toml (security.txt, "One place at a time"): the note
// of where an agent that left this machine went, and when. lnk agent
// start refuses an ID with a note, so two copies can't answer the same
// bot; an agent arriving back under its ID ends the note.

// Moved is a moved note.
type Moved struct {
	ID   string `toml:"id"`
	Name string `toml:"name"`
	To   string `toml:"to"`
	When string `toml:"when"`
}

// The move's refusals.
var (
	ErrMovedAway   = rule("moved-away", "the agent moved to another machine, and only one copy of it may run")
	ErrDuplicateID = rule("duplicate-id", "another agent here has that ID, which keys its services, sockets and tools")
)

// WriteMovedNote writes the note of agent a's leaving for to.
func WriteMovedNote(home string, a *Agent, to string) error {
	if !isID(a.ID) {
		return at(ErrAgentFile, quote(a.ID))
	}
	d, err := ownerdir.Open(home, ".lnk", "moved")
	if err != nil {
		return err
	}
	defer d.Close()
	var buf bytes.Buffer
	m := Moved{ID: a.ID, Name: a.Name, To: to, When: time.Now().UTC().Format(time.RFC3339)}
	if err := toml.NewEncoder(&buf).Encode(m); err != nil {
		return err
	}
	return ownerfile.WriteAtomic(int(d.Fd()), a.ID+".toml", buf.Bytes(), ownerfile.Write{})
}

// CheckNotMoved refuses agent a when a note says it moved away. A note
// that can't be read refuses too: it can't be told apart from one.
func CheckNotMoved(home string, a *Agent) error {
	if !isID(a.ID) {
		return at(ErrAgentFile, quote(a.ID))
	}
	d, err := ownerdir.Open(home, ".lnk", "moved")
	if err != nil {
		return err
	}
	defer d.Close()
	b, err := ownerfile.ReadFile(int(d.Fd()), a.ID+".toml", ownerfile.Private, 64<<10)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return at(ErrMovedAway, quote(a.Name)+" (its note ~/.lnk/moved/"+a.ID+".toml can't be read: "+err.Error()+")",
			"lnk agent move "+a.Name+" brings it back here; remove ~/.lnk/moved/"+a.ID+".toml only once no other machine runs it")
	}
	var m Moved
	if _, err := toml.Decode(string(b), &m); err != nil || m.ID != a.ID {
		return at(ErrMovedAway, quote(a.Name)+" (its note ~/.lnk/moved/"+a.ID+".toml is not one Link wrote)",
			"lnk agent move "+a.Name+" brings it back here")
	}
	return at(ErrMovedAway, fmt.Sprintf("%s (to %s at %s)", quote(a.Name), quote(m.To), quote(m.When)),
		"lnk agent move "+a.Name+" brings it back here; it runs where it went")
}

// RemoveMovedNote ends agent id's note: it is here again.
func RemoveMovedNote(home, id string) error {
	if !isID(id) {
		return at(ErrAgentFile, quote(id))
	}
	d, err := ownerdir.Open(home, ".lnk", "moved")
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Unlinkat(int(d.Fd()), id+".toml", 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return ownerfile.SyncDir(int(d.Fd()))
}

// ReadMovedNote returns agent id's note as written, nil when there is
// none: what a receive journals before it ends the note. A note not one
// Link wrote for id is refused.
func ReadMovedNote(home, id string) ([]byte, error) {
	if !isID(id) {
		return nil, at(ErrAgentFile, quote(id))
	}
	d, err := ownerdir.Open(home, ".lnk", "moved")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	b, err := ownerfile.ReadFile(int(d.Fd()), id+".toml", ownerfile.Private, 64<<10)
	if errors.Is(err, unix.ENOENT) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading ~/.lnk/moved/%s.toml: %w", id, err)
	}
	if err := CheckMovedNote(b, id); err != nil {
		return nil, err
	}
	return b, nil
}

// CheckMovedNote refuses b unless it is a moved note of agent id.
func CheckMovedNote(b []byte, id string) error {
	var m Moved
	if _, err := toml.Decode(string(b), &m); err != nil || m.ID != id || len(b) == 0 || len(b) > 64<<10 {
		return at(ErrAgentFile, "~/.lnk/moved/"+quote(id)+".toml is not a note Link wrote")
	}
	return nil
}

// PutMovedNoteBack writes b back as agent id's note, for a receive
// undone, unless a note is there: writing it back twice changes nothing.
func PutMovedNoteBack(home, id string, b []byte) error {
	if err := CheckMovedNote(b, id); err != nil {
		return err
	}
	d, err := ownerdir.Open(home, ".lnk", "moved")
	if err != nil {
		return err
	}
	defer d.Close()
	err = ownerfile.WriteAtomic(int(d.Fd()), id+".toml", b, ownerfile.Write{NoReplace: true})
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	return err
}
