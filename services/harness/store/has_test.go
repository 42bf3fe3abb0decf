package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHas: a conversation is kept once opened (the positive control),
// not before; a link or a file where its folder would be, and a name
// that is no thread's, are errors, never "not kept".
func TestHas(t *testing.T) {
	dir, f := agent(t)
	c := chats(t, f)
	if ok, err := c.Has("work-1"); ok || err != nil {
		t.Fatalf("before it was opened: %v %v", ok, err)
	}
	v, err := c.Open("work-1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	if ok, err := c.Has("work-1"); !ok || err != nil {
		t.Fatalf("once opened: %v %v", ok, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "chats", "gone")); !os.IsNotExist(err) {
		t.Fatal("Has made a folder")
	}
	os.Symlink(filepath.Join(dir, "chats", "work-1"), filepath.Join(dir, "chats", "linked"))
	os.WriteFile(filepath.Join(dir, "chats", "file"), nil, 0o600)
	for _, th := range []string{"linked", "file", "../x", ""} {
		if ok, err := c.Has(th); ok || err == nil {
			t.Errorf("Has(%q) = %v %v, want an error", th, ok, err)
		}
	}
}
