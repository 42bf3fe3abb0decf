package runtool

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestEndingIntoGoneConversationDropped: with a real Link Harness behind
// the real way in, a background command started in a conversation the
// harness doesn't keep (the owner deleted it) has its ending refused
// there and marked told, never tried again at each start and never
// starting the conversation anew; one started in main reaches the agent
// (the positive control).
func TestEndingIntoGoneConversationDropped(t *testing.T) {
	a := testAgent(t, "")
	chats := linkHarness(t, a)
	openWayIn(t, a)
	cs := connect(t, a)
	gone := startBg(t, cs, "gone", "true")
	kept := startBg(t, cs, "main", "true")
	if !waitFor(30*time.Second, func() bool { return len(messagesFrom(t, chats, "main", "run:"+kept)) == 1 }) {
		t.Fatal("the ending into main never reached the agent")
	}
	ending := filepath.Join(a.Home, ".lnk", "agents", a.ID, "background", gone+".ending.json")
	if !waitFor(15*time.Second, func() bool { _, err := os.Stat(ending); return errors.Is(err, os.ErrNotExist) }) {
		t.Fatal("the ending into a conversation gone stays, to be refused at every delivery")
	}
	if _, err := os.Lstat(filepath.Join(chats, "gone")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the ending started the conversation anew: %v", err)
	}
}
