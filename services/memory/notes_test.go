package memory_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"lnk.dev/lnk/services/memory"
)

func TestRememberOwnersConversationsOnly(t *testing.T) {
	d := newDirs(t, "ada")
	a, _ := openAgent(t, d)
	notes := d.own + "/memory/notes.md"
	for _, thread := range []string{"", "agent-7f3a", "team-ops", "task-12", "webhook:github", "telegram:123", "../main", strings.Repeat("m", 200)} {
		_, err := a.Remember(thread, "the owner likes tea")
		var r *memory.Refusal
		if !errors.As(err, &r) || !strings.Contains(r.Reason, "only in a conversation of your owner's") {
			t.Errorf("remember in %q: %v, want a refusal saying why", thread, err)
		}
		if _, err := os.Stat(notes); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("remember in %q wrote the notes", thread)
		}
	}
	// Positive control: the owner's conversation writes the notes.
	if _, err := a.Remember("main", "the owner likes tea"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Remember("main", "  dentist\non Friday "); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(notes)
	if err != nil || string(b) != "- the owner likes tea\n- dentist on Friday\n" {
		t.Fatalf("notes = %q %v", b, err)
	}
	if st, _ := os.Stat(notes); st.Mode().Perm() != 0o600 {
		t.Errorf("notes mode %o", st.Mode().Perm())
	}
}

func TestRememberLimit(t *testing.T) {
	d := newDirs(t, "ada")
	a, _ := openAgent(t, d)
	n, err := a.Remember("main", strings.Repeat("a", memory.MaxNotes-3))
	if err != nil || n != memory.MaxNotes {
		t.Fatalf("a note filling the notes exactly: %d %v", n, err)
	}
	_, err = a.Remember("main", "b")
	var r *memory.Refusal
	if !errors.As(err, &r) || !strings.Contains(r.Reason, "[tool.memory] notes") || r.Hint == "" {
		t.Fatalf("past the limit: %v", err)
	}
	if b, _ := os.ReadFile(d.own + "/memory/notes.md"); len(b) != memory.MaxNotes {
		t.Errorf("notes changed by a refused note: %d bytes", len(b))
	}
}

// A link at notes.md is neither followed nor replaced.
func TestRememberNeverThroughALink(t *testing.T) {
	d := newDirs(t, "ada")
	a, _ := openAgent(t, d)
	target := d.root + "/target.md"
	write(t, target, "untouched\n")
	if err := os.Symlink(target, d.own+"/memory/notes.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Remember("main", "x"); err == nil {
		t.Fatal("remember wrote through a link")
	}
	if b, _ := os.ReadFile(target); string(b) != "untouched\n" {
		t.Errorf("target changed: %q", b)
	}
	if fi, err := os.Lstat(d.own + "/memory/notes.md"); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
}
