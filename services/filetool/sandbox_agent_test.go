package filetool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// serveAgent is `lnk-file-tool serve --agent ada` for a test HOME where
// ada exists, connected to the go-sdk client.
func serveAgent(t testing.TB) (home, files, own string) {
	t.Helper()
	requireSandbox(t)
	testenv.Bin(t, "lnk")
	testenv.Bin(t, "lnk-init")
	home = testenv.Home(t)
	if _, err := caps.CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, "Link", "Agents", "ada")
	return home, filepath.Join(dir, "Home"), filepath.Join(dir, "Agent")
}

// TestServeAgent: the command built from agent ada's grants (work/ by
// default, notes/ allowed, a folder outside its Home written too) runs
// under a real sandbox that writes work/ and notes/ only: a write to
// either lands, one elsewhere in Home is refused, its instructions are
// read from its own folder, and memory/, which the sandbox does not
// bind, is not there.
func TestServeAgent(t *testing.T) {
	home, files, own := serveAgent(t)
	outside := filepath.Join(home, "Projects", "x")
	for _, d := range []string{filepath.Join(files, "notes"), filepath.Join(own, "instructions"), filepath.Join(own, "memory"), outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(own, "instructions", "i.md"), []byte("be brief\n"), 0o600)
	os.WriteFile(filepath.Join(own, "memory", "notes.md"), []byte("kept\n"), 0o600)
	if _, err := caps.Allow(home, "ada", caps.Grants{Write: []string{"notes", outside}}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, []string{"--agent", "ada"})

	ok(t, cs, "write", map[string]any{"path": "work/a.txt", "content": "a\n"})
	ok(t, cs, "write", map[string]any{"path": "notes/b.txt", "content": "b\n"})
	for p, want := range map[string]string{"work/a.txt": "a\n", "notes/b.txt": "b\n"} {
		if b, err := os.ReadFile(filepath.Join(files, p)); err != nil || string(b) != want {
			t.Fatalf("%s did not land: %q %v", p, b, err)
		}
	}
	text, isErr := call(t, cs, "write", map[string]any{"path": "top.txt", "content": "x\n"})
	if !isErr || !strings.Contains(text, "not in a folder --write names") {
		t.Fatalf("a write outside the granted folders: %v %q", isErr, text)
	}
	if _, err := os.Stat(filepath.Join(files, "top.txt")); err == nil {
		t.Fatal("a write outside the granted folders landed")
	}
	if r := ok(t, cs, "read", map[string]any{"path": "instructions/i.md"}); r["text"] != "be brief\n" {
		t.Fatalf("instructions: %v", r)
	}
	if text, isErr := call(t, cs, "read", map[string]any{"path": "memory/notes.md"}); !isErr {
		t.Fatalf("memory/, which the file tool's sandbox does not bind, was read: %q", text)
	}
}

// TestServeAgentWritingItsHome: an agent whose grants write all of its
// Home (--write . to apply) writes anywhere in it, but its own folder's
// instructions/, skills/ and chats/, which the sandbox binds read-only,
// are refused in words first, and its memory/ is not reached, as the
// server's instructions say.
func TestServeAgentWritingItsHome(t *testing.T) {
	home, files, own := serveAgent(t)
	for _, d := range []string{"instructions", "skills/s", "chats", "memory"} {
		if err := os.MkdirAll(filepath.Join(own, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(own, "memory", "notes.md"), []byte("kept\n"), 0o600)
	if _, err := caps.Allow(home, "ada", caps.Grants{Write: []string{files}}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, []string{"--agent", "ada"})
	said := cs.InitializeResult().Instructions
	for _, words := range []string{"instructions/, skills/ and chats/ are those of its own folder, read here and never written", "its own folder's memory/ is not reached"} {
		if !strings.Contains(said, words) {
			t.Fatalf("the server's instructions do not say %q: %q", words, said)
		}
	}
	ok(t, cs, "write", map[string]any{"path": "top.txt", "content": "x\n"})
	for p, words := range map[string]string{
		"instructions/i.md": "its owner's to write",
		"skills/s/SKILL.md": "its owner's to write",
		"chats/c.txt":       "Link's to write",
		"memory/notes.md":   "Link's to write",
	} {
		text, isErr := call(t, cs, "write", map[string]any{"path": p, "content": "x\n"})
		if !isErr || !strings.Contains(text, words) {
			t.Errorf("write %s: %v %q", p, isErr, text)
		}
		if _, err := os.Stat(filepath.Join(own, p)); err == nil && p != "memory/notes.md" {
			t.Errorf("%s was written", p)
		}
	}
	if text, isErr := call(t, cs, "read", map[string]any{"path": "memory/notes.md"}); !isErr {
		t.Fatalf("its own folder's memory/ was read: %q", text)
	}
}

// TestServeAgentWithoutAFileGrant: an agent whose grants write nothing of
// its Home gets, at the first call, why and the lnk command that would
// allow it.
func TestServeAgentWithoutAFileGrant(t *testing.T) {
	home, _, _ := serveAgent(t)
	if _, err := caps.Deny(home, "ada", caps.Grants{Write: []string{"work"}}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, []string{"--agent", "ada"})
	text, isErr := call(t, cs, "list", nil)
	if !isErr || !strings.Contains(text, "write no folder of its files folder") || !strings.Contains(text, "lnk agent allow ada --write work") {
		t.Fatalf("an agent with no file grant: %v %q", isErr, text)
	}
}
