package move_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/move"
)

// plantDeleting leaves in agent name's chats/ what a conversation's
// delete cut short leaves: chats/.~deleting~garden with its log.
func plantDeleting(t *testing.T, home, name string) {
	t.Helper()
	write(t, filepath.Join(caps.Layout{Home: home}.OwnDir(name), "chats", ".~deleting~garden", "events.jsonl"), "{\"kind\":\"message\",\"text\":\"deleted words\"}\n", 0o600)
}

// TestBackupLeavesADeleteLeftoverOut: Agent.tar holds the agent's
// conversations (chats/c1.jsonl, the control) and never chats/
// .~deleting~garden, which a cut-short delete left; the backup says so.
func TestBackupLeavesADeleteLeftoverOut(t *testing.T) {
	home := testenv.Home(t)
	makeAgent(t, home, "main")
	plantDeleting(t, home, "main")
	var notes []string
	got, err := (&move.Backup{Home: home, Name: "main", Note: func(n string) { notes = append(notes, n) }}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var list string
	for _, p := range got.Written {
		if filepath.Base(p) == move.AgentArchive {
			out, err := exec.Command("tar", "tf", p).CombinedOutput()
			if err != nil {
				t.Fatalf("tar tf %s: %v: %s", p, err, out)
			}
			list = string(out)
		}
	}
	if !strings.Contains(list, "chats/c1.jsonl\n") {
		t.Fatalf("Agent.tar lacks the conversation chats/c1.jsonl:\n%s", list)
	}
	if strings.Contains(list, "deleting") {
		t.Fatalf("Agent.tar carries a delete's leftover:\n%s", list)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "chats/.~deleting~garden is not sent") {
		t.Errorf("the backup doesn't say it left the leftover out: %q", notes)
	}
}

// TestMoveLeavesADeleteLeftoverOut: a move sends the agent's
// conversations (chats/c1.jsonl arrives, the control) and never chats/
// .~deleting~garden.
func TestMoveLeavesADeleteLeftoverOut(t *testing.T) {
	from, to := twoHomes(t)
	makeAgent(t, from, "main")
	plantDeleting(t, from, "main")
	pub, priv := newKey(t)
	sealed := send(t, from, "main", pub)
	r := &move.Receive{Home: to, Key: priv, Note: func(string) {}}
	if _, err := r.Run(context.Background(), bytes.NewReader(sealed)); err != nil {
		t.Fatalf("receive: %v", err)
	}
	chats := filepath.Join(caps.Layout{Home: to}.OwnDir("main"), "chats")
	if b, err := os.ReadFile(filepath.Join(chats, "c1.jsonl")); err != nil || !strings.Contains(string(b), "hi") {
		t.Fatalf("the conversation didn't arrive: %q %v", b, err)
	}
	if _, err := os.Lstat(filepath.Join(chats, ".~deleting~garden")); !os.IsNotExist(err) {
		t.Fatalf("the move carried a delete's leftover: %v", err)
	}
}
