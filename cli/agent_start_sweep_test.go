package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// TestStartRemovesADeleteLeftover: lnk agent start removes what a
// conversation's delete cut short left in chats/ (.~deleting~garden and
// what it holds), and a link planted under such a name as itself, never
// followed: the folder it points at keeps its file. The conversation
// work is kept (the control). The start itself is then refused by the
// machine's rule, after the sweep.
func TestStartRemovesADeleteLeftover(t *testing.T) {
	home := testenv.Home(t)
	os.MkdirAll(filepath.Join(home, ".lnk"), 0o700)
	os.WriteFile(filepath.Join(home, ".lnk", "machine.toml"), []byte("unsandboxed = false\n"), 0o600)
	if _, err := caps.CreateAgent(home, "main"); err != nil {
		t.Fatal(err)
	}
	chats := filepath.Join(caps.Layout{Home: home}.OwnDir("main"), "chats")
	for _, d := range []string{".~deleting~garden/sub", "work"} {
		if err := os.MkdirAll(filepath.Join(chats, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(chats, ".~deleting~garden", "events.jsonl"), []byte("deleted\n"), 0o600)
	os.WriteFile(filepath.Join(chats, ".~deleting~garden", "sub", "1.json"), []byte("deleted\n"), 0o600)
	os.WriteFile(filepath.Join(chats, "work", "events.jsonl"), []byte("kept\n"), 0o600)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "mine"), []byte("mine\n"), 0o600)
	if err := os.Symlink(outside, filepath.Join(chats, ".~deleting~evil")); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runLnk(t, "agent", "start", "main", "--no-sandbox")
	if code == ExitOK || !strings.Contains(errs, "unsandboxed") {
		t.Fatalf("start: code %d, %s", code, errs)
	}
	for _, n := range []string{".~deleting~garden", ".~deleting~evil"} {
		if _, err := os.Lstat(filepath.Join(chats, n)); !os.IsNotExist(err) {
			t.Errorf("chats/%s: %v, want it removed", n, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "mine")); err != nil || string(b) != "mine\n" {
		t.Errorf("the link's target: %q %v, want it untouched", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(chats, "work", "events.jsonl")); err != nil || string(b) != "kept\n" {
		t.Errorf("conversation work: %q %v, want it kept", b, err)
	}
}
