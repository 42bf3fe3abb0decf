package caps

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMovedNoteRefusesTheID: an agent with a moved note is refused by
// CheckNotMoved (what lnk agent start asks), read back from the note's
// file; without one (before it, and once the note ends) it is not.
func TestMovedNoteRefusesTheID(t *testing.T) {
	home := t.TempDir()
	a, err := CreateAgent(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	hit(t, CheckNotMoved(home, a), nil)
	if err := WriteMovedNote(home, a, "box1"); err != nil {
		t.Fatal(err)
	}
	note := filepath.Join(home, ".lnk", "moved", a.ID+".toml")
	if fi, err := os.Stat(note); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the note: %v %v, want a 0600 file", fi, err)
	}
	hit(t, CheckNotMoved(home, a), ErrMovedAway)
	if err := RemoveMovedNote(home, a.ID); err != nil {
		t.Fatal(err)
	}
	hit(t, CheckNotMoved(home, a), nil)
	// A note that is not a file of the owner's refuses too: it can't be
	// told apart from one.
	os.MkdirAll(filepath.Dir(note), 0o700)
	if err := os.Symlink("/dev/null", note); err != nil {
		t.Fatal(err)
	}
	hit(t, CheckNotMoved(home, a), ErrMovedAway)
}

// TestAdoptAgentKeepsItsIDAndRefusesAHeldOne: an arriving agent is made
// under its ID, without no_sandbox, its ports or a loopback model; a
// second agent with the same ID is refused.
func TestAdoptAgentKeepsItsIDAndRefusesAHeldOne(t *testing.T) {
	home := t.TempDir()
	in := &Agent{ID: NewID(), Name: "main", NoSandbox: true, Ports: &PortBlock{First: 20000, Count: 10}}
	a, left, err := AdoptAgent(home, in, []byte("[internet]\nhosts = [\"example.com\"]\n"))
	hit(t, err, nil)
	back, err := LoadAgent(home, "main")
	if err != nil || back.ID != in.ID || back.NoSandbox || back.Ports != nil || a.ID != in.ID {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if len(left) != 1 {
		t.Errorf("left out %v, want no_sandbox named", left)
	}
	_, _, err = AdoptAgent(home, &Agent{ID: in.ID, Name: "other"}, nil)
	hit(t, err, ErrDuplicateID)
	if _, err := os.Stat(filepath.Join(home, "Link", "Agents", "other")); !os.IsNotExist(err) {
		t.Errorf("the refused agent's folder was made: %v", err)
	}
}

// TestPausedMarkers: pause writes paused and paused.quiet; unpause
// removes both.
func TestPausedMarkers(t *testing.T) {
	home := t.TempDir()
	if _, err := CreateAgent(home, "main"); err != nil {
		t.Fatal(err)
	}
	if p, q, err := Paused(home, "main"); p || q || err != nil {
		t.Fatalf("before: %v %v %v", p, q, err)
	}
	if err := MarkPaused(home, "main", true); err != nil {
		t.Fatal(err)
	}
	if p, q, err := Paused(home, "main"); !p || !q || err != nil {
		t.Fatalf("paused: %v %v %v", p, q, err)
	}
	if err := Unpause(home, "main"); err != nil {
		t.Fatal(err)
	}
	if p, q, err := Paused(home, "main"); p || q || err != nil {
		t.Fatalf("after: %v %v %v", p, q, err)
	}
}
