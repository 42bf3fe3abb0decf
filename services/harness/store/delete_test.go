package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDeleteRemovesAConversation: a conversation with its log, readable
// copy and an emptied inbox is removed and no longer listed; the others
// stay. A leftover a cut-short delete left aside is swept by the next.
func TestDeleteRemovesAConversation(t *testing.T) {
	dir, f := agent(t)
	c := chats(t, f)
	for _, th := range []string{"garden", "work"} {
		v, err := c.Open(th, Options{})
		if err != nil {
			t.Fatal(err)
		}
		says(t, v, "hello "+th)
		v.Close()
	}
	leftover := filepath.Join(dir, "chats", deletingPrefix+"old", "events.jsonl")
	os.MkdirAll(filepath.Dir(leftover), 0o700)
	os.WriteFile(leftover, []byte("{}\n"), 0o600)
	if got, _ := c.List(); !slices.Equal(got, []string{"garden", "work"}) {
		t.Fatalf("before: %v (a leftover aside is no conversation)", got)
	}
	if link, err := c.Delete("garden", false); err != nil || link {
		t.Fatalf("delete: %v %v", link, err)
	}
	if got, _ := c.List(); !slices.Equal(got, []string{"work"}) {
		t.Fatalf("after: %v", got)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "chats")); len(ents) != 1 {
		t.Fatalf("chats/ holds %v", ents)
	}
	if has, err := c.Has("garden"); has || err != nil {
		t.Fatalf("Has after the delete: %v %v", has, err)
	}
	if _, err := c.Delete("garden", false); !errors.Is(err, ErrNotKept) {
		t.Fatalf("a second delete: %v", err)
	}
	if _, err := c.Delete("../work", true); err == nil {
		t.Fatal("a path was taken as a thread")
	}
}

// TestDeleteRefusesABusyConversation: while a writer (a turn) holds the
// log, the delete is refused, stopped or not, and the conversation is
// whole; while a message waits in its inbox, it is refused unless the
// agent is stopped. Once the turn ends the same delete works.
func TestDeleteRefusesABusyConversation(t *testing.T) {
	_, f := agent(t)
	c := chats(t, f)
	v, err := c.Open("work", Options{})
	if err != nil {
		t.Fatal(err)
	}
	says(t, v, "first")
	for _, stopped := range []bool{false, true} {
		if _, err := c.Delete("work", stopped); !errors.Is(err, ErrTurnRunning) {
			t.Fatalf("stopped %v, a turn running: %v", stopped, err)
		}
	}
	if got, _ := c.List(); !slices.Equal(got, []string{"work"}) {
		t.Fatalf("after the refusal: %v", got)
	}
	v.Close()
	if _, err := c.Queue("work", Queued{From: "stranger:webhook:ci", Text: "later"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete("work", false); !errors.Is(err, ErrQueued) {
		t.Fatalf("a message waiting, the agent running: %v", err)
	}
	if got, _ := c.List(); !slices.Equal(got, []string{"work"}) {
		t.Fatalf("after the refusal: %v", got)
	}
	if _, err := c.Delete("work", true); err != nil {
		t.Fatalf("the agent stopped: %v", err)
	}
	if got, _ := c.List(); len(got) != 0 {
		t.Fatalf("after the delete: %v", got)
	}
}

// TestDeleteNeverFollowsALink: a link planted in chats/ under a thread's
// name is removed as itself, the folder it points at untouched; a link
// inside a conversation's folder is removed as itself too, its target
// untouched.
func TestDeleteNeverFollowsALink(t *testing.T) {
	dir, f := agent(t)
	c := chats(t, f)
	outside := t.TempDir()
	precious := filepath.Join(outside, "events.jsonl")
	os.WriteFile(precious, []byte("mine\n"), 0o600)
	if err := os.Symlink(outside, filepath.Join(dir, "chats", "evil")); err != nil {
		t.Fatal(err)
	}
	if link, err := c.Delete("evil", false); err != nil || !link {
		t.Fatalf("delete of a link: %v %v", link, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "chats", "evil")); !os.IsNotExist(err) {
		t.Fatalf("the link is left: %v", err)
	}
	v, err := c.Open("work", Options{})
	if err != nil {
		t.Fatal(err)
	}
	says(t, v, "x")
	v.Close()
	if err := os.Symlink(outside, filepath.Join(dir, "chats", "work", "out")); err != nil {
		t.Fatal(err)
	}
	if link, err := c.Delete("work", false); err != nil || link {
		t.Fatalf("delete: %v %v", link, err)
	}
	if b, err := os.ReadFile(precious); err != nil || string(b) != "mine\n" {
		t.Fatalf("the links' target: %q %v", b, err)
	}
}
