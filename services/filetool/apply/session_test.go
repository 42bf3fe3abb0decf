package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/resolve"
	"lnk.dev/lnk/services/filetool/query"
)

func TestEachCall(t *testing.T) {
	w := newWorld(t, "work", "instructions")
	w.put(t, "notes.md", "one\ntwo\nthree\n")
	os.Symlink(t.TempDir(), filepath.Join(w.files, "work", "dirln"))
	w.put(t, "work/src/main.go", "package main\nfunc main() {}\n")

	r := w.mustCall(t, "read", m{"path": "notes.md"}).(*ReadAnswer)
	if r.Text != "one\ntwo\nthree\n" || r.Lines != 3 || r.NextLine != 0 || r.Version == "" {
		t.Fatalf("read: %+v", r)
	}
	r = w.mustCall(t, "read", m{"path": "notes.md", "line": 2, "limit": 1}).(*ReadAnswer)
	if r.Text != "two\n" || r.NextLine != 3 {
		t.Fatalf("read from line 2: %+v", r)
	}

	wa := w.mustCall(t, "write", m{"path": "work/new.txt", "content": "a\nb\n"}).(*WriteAnswer)
	if !wa.Created || !strings.HasPrefix(wa.Diff, "--- /dev/null\n+++ b/work/new.txt\n") || !strings.Contains(wa.Diff, "+b\n") {
		t.Fatalf("write of a new file: %+v", wa)
	}
	w.mustCall(t, "write", m{"path": "work/new/deep/x.txt", "content": "made with its folders\n"})
	if w.get(t, "work/new/deep/x.txt") != "made with its folders\n" {
		t.Fatal("a write in a new folder")
	}
	if _, err := w.call("write", m{"path": "work/dirln/new/x.txt", "content": "x"}); err == nil {
		t.Fatal("a folder was made through a link")
	}
	wa = w.mustCall(t, "replace", m{"path": "work/new.txt", "old": "b", "new": "c"}).(*WriteAnswer)
	if wa.Replaced != 1 || !strings.Contains(wa.Diff, "-b\n+c\n") || w.get(t, "work/new.txt") != "a\nc\n" {
		t.Fatalf("replace: %+v", wa)
	}
	wa = w.mustCall(t, "write", m{"path": "instructions/x.md", "content": "be brief\n"}).(*WriteAnswer)
	if b, err := os.ReadFile(filepath.Join(w.agent, "instructions", "x.md")); err != nil || string(b) != "be brief\n" {
		t.Fatalf("a write to instructions/ did not land in the agent folder: %q %v", b, err)
	}

	f := w.mustCall(t, "find", m{"name": "*.GO"}).(*FindAnswer)
	if len(f.Matches) != 1 || f.Matches[0].Path != "work/src/main.go" {
		t.Fatalf("find by name: %+v", f)
	}
	f = w.mustCall(t, "find", m{"path": "work", "name": "src/*.go", "text": `^func \w+`}).(*FindAnswer)
	if len(f.Matches) != 1 || f.Matches[0].Line != 2 {
		t.Fatalf("find by path and text: %+v", f)
	}
	l := w.mustCall(t, "list", m{"path": "work"}).(*ListAnswer)
	if len(l.Entries) != 4 || l.Entries[0].Type != "link" || l.Entries[2].Name != "new.txt" || l.Entries[3].Type != "folder" {
		t.Fatalf("list: %+v", l)
	}
}

func TestRefusals(t *testing.T) {
	w := newWorld(t, "work")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600)
	w.put(t, "big.txt", strings.Repeat("x", MaxFile+1))
	w.put(t, "bin.dat", "a\x00b")
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(w.files, "work", "ln"))
	os.Symlink(outside, filepath.Join(w.files, "work", "dirln"))
	os.MkdirAll(filepath.Join(w.files, "work", ".git"), 0o700)
	if err := mkfifo(filepath.Join(w.files, "work", "fifo")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		call string
		args m
		want error
	}{
		{"absolute", "read", m{"path": "/etc/passwd"}, resolve.ErrEscape},
		{"dot-dot", "read", m{"path": "work/../../x"}, resolve.ErrEscape},
		{"unclean", "read", m{"path": "work//ln"}, resolve.ErrInvalid},
		{"link", "read", m{"path": "work/ln"}, resolve.ErrLink},
		{"through a linked folder", "read", m{"path": "work/dirln/secret"}, resolve.ErrLink},
		{"fifo read", "read", m{"path": "work/fifo"}, resolve.ErrNotRegular},
		{"fifo write", "write", m{"path": "work/fifo", "content": "x"}, resolve.ErrNotRegular},
		{"link write", "write", m{"path": "work/ln", "content": "x"}, resolve.ErrLink},
		{"write through a linked folder", "write", m{"path": "work/dirln/secret", "content": "x"}, resolve.ErrLink},
		{"over 4 MiB", "read", m{"path": "big.txt"}, ErrTooLarge},
		{"write over 4 MiB", "write", m{"path": "work/big", "content": strings.Repeat("x", MaxFile+1)}, ErrTooLarge},
		{"not text", "read", m{"path": "bin.dat"}, ErrNotText},
		{"write not text", "write", m{"path": "work/t", "content": "a\x00"}, ErrNotText},
		{"outside --write", "write", m{"path": "notes.md", "content": "x"}, ErrNotWritable},
		{"the folder itself", "write", m{"path": ".", "content": "x"}, ErrNotWritable},
		{"chats", "write", m{"path": "chats/c/events.jsonl", "content": "x"}, ErrNeverWrite},
		{".git", "write", m{"path": "work/.git/config", "content": "x"}, ErrReadOnly},
		{"hostile regex", "find", m{"text": `\pL{1000}`}, query.ErrTooLarge},
		{"unknown argument", "read", m{"path": "x", "mode": "raw"}, ErrUsage},
		{"unknown call", "delete", m{"path": "x"}, ErrUsage},
		{"list through a link", "list", m{"path": "work/dirln"}, resolve.ErrLink},
		{"find through a link", "find", m{"path": "work/dirln"}, resolve.ErrLink},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := w.call(c.call, c.args)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if strings.ContainsAny(err.Error(), "\n") || err.Error() != strings.ToLower(err.Error()[:1])+err.Error()[1:] {
				t.Fatalf("not one lowercase line: %q", err)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "secret" {
		t.Fatalf("the file outside changed: %q", b)
	}
	if _, err := NewSession(w.disk, []string{"chats"}); !errors.Is(err, ErrNeverWrite) {
		t.Fatalf("--write chats: %v", err)
	}
	if _, err := NewSession(w.disk, []string{"/tmp"}); err == nil {
		t.Fatal("--write /tmp was taken")
	}
}

// TestWriteAnywhereWithDot: --write . writes anywhere in the files
// folder but the folder itself, chats/ and memory/, and a .git, .envrc,
// .vscode or .idea at its top; where instructions/ and skills/ name the
// agent folder (its owner's, which the sandbox binds read-only), not
// there either, but without an agent folder they are the files folder's.
func TestWriteAnywhereWithDot(t *testing.T) {
	w := newWorld(t, ".")
	for _, c := range []struct {
		path  string
		want  error
		words string
	}{
		{"top.txt", nil, ""},
		{"work/deep/new.txt", nil, ""},
		{".", ErrNotWritable, "the folder itself"},
		{"chats/a", ErrNeverWrite, "Link's to write"},
		{"memory/notes.md", ErrNeverWrite, "Link's to write"},
		{".git/config", ErrReadOnly, ".git, .envrc"},
		{"instructions/a.md", ErrNotWritable, "instructions/ and skills/ are the agent folder's, its owner's to write"},
		{"skills/s/SKILL.md", ErrNotWritable, "instructions/ and skills/ are the agent folder's, its owner's to write"},
	} {
		_, err := w.call("write", m{"path": c.path, "content": "x"})
		if !errors.Is(err, c.want) || (err != nil && !strings.Contains(err.Error(), c.words)) {
			t.Errorf("write %s: %v, want %v (%s)", c.path, err, c.want, c.words)
		}
	}
	if _, err := os.Stat(filepath.Join(w.agent, "instructions", "a.md")); err == nil {
		t.Error("the agent folder's instructions/ was written")
	}

	// No agent folder: instructions/ is a folder of the files folder.
	d, err := OpenDisk(w.files, "", []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	s, err := NewSession(d, []string{"."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Call("write", []byte(`{"path":"instructions/a.md","content":"x"}`)); err != nil {
		t.Fatalf("instructions/ of the files folder under --write .: %v", err)
	}
	if got := w.get(t, "instructions/a.md"); got != "x" {
		t.Fatalf("instructions/a.md: %q", got)
	}
}

func TestDiffCut(t *testing.T) {
	w := newWorld(t, "work")
	var old strings.Builder
	for i := 0; i < 2000; i++ {
		old.WriteString("line of the old text, number ")
		old.WriteString(strings.Repeat("x", i%7))
		old.WriteByte('\n')
	}
	w.put(t, "work/f.txt", old.String())
	small := strings.Replace(old.String(), "number x\n", "number y\n", 1)
	a := w.mustCall(t, "write", m{"path": "work/f.txt", "content": small}).(*WriteAnswer)
	if a.DiffCut || a.SHA256 != "" || !strings.Contains(a.Diff, "+line of the old text, number y") || len(a.Diff) > MaxDiff {
		t.Fatalf("a small change: %+v", a)
	}
	big := strings.ReplaceAll(small, "old", "new")
	a = w.mustCall(t, "write", m{"path": "work/f.txt", "content": big}).(*WriteAnswer)
	sum := sha256.Sum256([]byte(big))
	if !a.DiffCut || a.Diff != "" || a.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("a change past 16 KB: cut=%v diff=%d bytes sha=%q", a.DiffCut, len(a.Diff), a.SHA256)
	}
	w.put(t, "work/bin", "\x00\x01")
	a = w.mustCall(t, "write", m{"path": "work/bin", "content": "text now\n"}).(*WriteAnswer)
	if !a.DiffCut || a.SHA256 == "" {
		t.Fatalf("a write over a file that held no text: %+v", a)
	}
}
