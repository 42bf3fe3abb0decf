package apply

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/resolve"
)

// TestVersionConflicts: a write names the version the session last read
// or wrote; of a file never seen, the version it reads, or absent; a
// replace names the version it reads.
func TestVersionConflicts(t *testing.T) {
	w := newWorld(t, "work")
	c := &counting{Files: w.disk}
	w.s.files = c
	w.put(t, "work/a.txt", "first\n")

	w.mustCall(t, "read", m{"path": "work/a.txt"})
	w.put(t, "work/a.txt", "changed outside\n")
	if _, err := w.call("write", m{"path": "work/a.txt", "content": "mine\n"}); !errors.Is(err, resolve.ErrChanged) {
		t.Fatalf("a write over a file changed since it was read: %v", err)
	}
	if got := w.get(t, "work/a.txt"); got != "changed outside\n" {
		t.Fatalf("the refused write changed the file: %q", got)
	}
	w.mustCall(t, "read", m{"path": "work/a.txt"})
	w.mustCall(t, "write", m{"path": "work/a.txt", "content": "mine\n"})
	w.mustCall(t, "write", m{"path": "work/a.txt", "content": "mine again\n"}) // names the version it wrote

	// A file never seen: the version it reads first. Changed between that
	// read and the write, it is refused.
	w.put(t, "work/b.txt", "b\n")
	c.beforeWrite = func() { w.put(t, "work/b.txt", "raced\n") }
	if _, err := w.call("write", m{"path": "work/b.txt", "content": "mine\n"}); !errors.Is(err, resolve.ErrChanged) {
		t.Fatalf("a write racing a change: %v", err)
	}
	// A new file: absent. Made between the read and the write, refused.
	c.beforeWrite = func() { w.put(t, "work/new.txt", "theirs\n") }
	if _, err := w.call("write", m{"path": "work/new.txt", "content": "mine\n"}); !errors.Is(err, resolve.ErrChanged) {
		t.Fatalf("a new file made meanwhile: %v", err)
	}
	if got := w.get(t, "work/new.txt"); got != "theirs\n" {
		t.Fatalf("the other file was overwritten: %q", got)
	}
	// A replace names the version it reads.
	w.put(t, "work/c.txt", "x y\n")
	c.beforeWrite = func() { w.put(t, "work/c.txt", "x y z\n") }
	if _, err := w.call("replace", m{"path": "work/c.txt", "old": "y", "new": "Y"}); !errors.Is(err, resolve.ErrChanged) {
		t.Fatalf("a replace racing a change: %v", err)
	}
	c.beforeWrite = nil
	w.mustCall(t, "replace", m{"path": "work/c.txt", "old": "z", "new": "Z"})
	if got := w.get(t, "work/c.txt"); got != "x y Z\n" {
		t.Fatalf("replace: %q", got)
	}
}

// TestPagingReadsOnce: a 4 MiB file's pages read it once; a write of it
// forgets the kept text.
func TestPagingReadsOnce(t *testing.T) {
	w := newWorld(t, "work")
	c := &counting{Files: w.disk}
	w.s.files = c
	var b strings.Builder
	for i := 1; b.Len() < MaxFile-100; i++ {
		fmt.Fprintf(&b, "line %07d %s\n", i, strings.Repeat("é", i%40))
	}
	text := b.String()
	w.put(t, "work/big.txt", text)

	var got strings.Builder
	pages, line := 0, 1
	for line != 0 {
		r := w.mustCall(t, "read", m{"path": "work/big.txt", "line": line}).(*ReadAnswer)
		if len(r.Text) > maxPage || r.Text == "" {
			t.Fatalf("page %d: %d bytes", pages, len(r.Text))
		}
		got.WriteString(r.Text)
		pages++
		if line == 1 {
			w.put(t, "work/big.txt", "changed under the pages\n") // the pages are of the text read
		}
		line = r.NextLine
	}
	if got.String() != text {
		t.Fatalf("the pages do not make the file: %d bytes of %d", got.Len(), len(text))
	}
	if c.reads != 1 || pages < 60 {
		t.Fatalf("%d pages read the file %d times", pages, c.reads)
	}
	// The kept text's version is the one a write names: refused.
	if _, err := w.call("write", m{"path": "work/big.txt", "content": "x"}); !errors.Is(err, resolve.ErrChanged) {
		t.Fatalf("write after the file changed under its pages: %v", err)
	}
	w.mustCall(t, "read", m{"path": "work/big.txt"})
	w.mustCall(t, "write", m{"path": "work/big.txt", "content": "a\nb\n"})
	before := c.reads
	r := w.mustCall(t, "read", m{"path": "work/big.txt", "line": 2}).(*ReadAnswer)
	if r.Text != "b\n" || c.reads != before+1 {
		t.Fatalf("a page after a write: %+v, reads %d→%d", r, before, c.reads)
	}
}

// TestPagingKeepsOneFile: the kept text is the last file read from line
// 1's alone. Once another file is read from line 1, a later page of the
// first reads it from disk again: a change made meanwhile is what it
// answers, with the version read then.
func TestPagingKeepsOneFile(t *testing.T) {
	w := newWorld(t, "work")
	c := &counting{Files: w.disk}
	w.s.files = c
	w.put(t, "work/a.txt", "a1\na2\n")
	w.put(t, "work/b.txt", "b1\nb2\n")

	first := w.mustCall(t, "read", m{"path": "work/a.txt"}).(*ReadAnswer)
	w.put(t, "work/a.txt", "a1\nchanged\n")
	if r := w.mustCall(t, "read", m{"path": "work/a.txt", "line": 2}).(*ReadAnswer); r.Text != "a2\n" || c.reads != 1 {
		t.Fatalf("a page of the kept file: %q, %d reads", r.Text, c.reads)
	}
	w.mustCall(t, "read", m{"path": "work/b.txt"})
	r := w.mustCall(t, "read", m{"path": "work/a.txt", "line": 2}).(*ReadAnswer)
	if r.Text != "changed\n" || r.Version == first.Version || c.reads != 3 {
		t.Fatalf("a page of a file no longer kept: %+v, %d reads", r, c.reads)
	}
	// Nor is b.txt now: a's page read a again, and keeps it instead.
	w.put(t, "work/b.txt", "b1\nb changed\n")
	if r := w.mustCall(t, "read", m{"path": "work/b.txt", "line": 2}).(*ReadAnswer); r.Text != "b changed\n" || c.reads != 4 {
		t.Fatalf("a page of b after a's: %q, %d reads", r.Text, c.reads)
	}
}

// TestFolderSwappedForLinkBetweenCalls: a folder read in one call and
// swapped for a link before the next is refused, never followed.
func TestFolderSwappedForLinkBetweenCalls(t *testing.T) {
	w := newWorld(t, "work")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "a.txt"), []byte("outside\n"), 0o600)
	w.put(t, "work/sub/a.txt", "inside\n")
	w.mustCall(t, "read", m{"path": "work/sub/a.txt"})
	w.mustCall(t, "list", m{"path": "work/sub"})

	sub := filepath.Join(w.files, "work", "sub")
	if err := os.Rename(sub, sub+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, sub); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		call string
		args m
	}{
		{"read", m{"path": "work/sub/a.txt", "line": 1}},
		{"write", m{"path": "work/sub/a.txt", "content": "mine\n"}},
		{"replace", m{"path": "work/sub/a.txt", "old": "outside", "new": "mine"}},
		{"list", m{"path": "work/sub"}},
		{"find", m{"path": "work/sub", "text": "outside"}},
	} {
		if _, err := w.call(c.call, c.args); !errors.Is(err, resolve.ErrLink) {
			t.Errorf("%s through the swapped folder: %v", c.call, err)
		}
	}
	f := w.mustCall(t, "find", m{"text": "outside"}).(*FindAnswer)
	if len(f.Matches) != 0 {
		t.Fatalf("find followed the link: %+v", f)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "a.txt")); string(b) != "outside\n" {
		t.Fatalf("the file outside changed: %q", b)
	}
}

// TestWriteFolderSwappedBetweenCalls: a --write folder, held as a root of
// its own, swapped for a link between two calls is refused, neither
// followed nor written through the handle held; so is another folder
// moved into its place.
func TestWriteFolderSwappedBetweenCalls(t *testing.T) {
	w := newWorld(t, "work")
	w.put(t, "work/a.txt", "inside\n")
	w.mustCall(t, "read", m{"path": "work/a.txt"})
	work := filepath.Join(w.files, "work")
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "a.txt"), []byte("outside\n"), 0o600)
	if err := os.Rename(work, work+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, work); err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		call string
		args m
	}{
		{"read", m{"path": "work/a.txt", "line": 1}},
		{"write", m{"path": "work/a.txt", "content": "mine\n"}},
		{"write", m{"path": "work/new.txt", "content": "mine\n"}},
		{"list", m{"path": "work"}},
		{"find", m{"path": "work", "text": "outside"}},
	}
	for _, c := range calls {
		if _, err := w.call(c.call, c.args); !errors.Is(err, resolve.ErrLink) {
			t.Errorf("%s %v through the --write folder swapped for a link: %v", c.call, c.args, err)
		}
	}
	os.Remove(work)
	other := t.TempDir()
	if err := os.Rename(other, work); err != nil {
		t.Fatal(err)
	}
	for _, c := range calls {
		if _, err := w.call(c.call, c.args); !errors.Is(err, errMoved) {
			t.Errorf("%s %v with another folder in the --write folder's place: %v", c.call, c.args, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "a.txt")); string(b) != "outside\n" {
		t.Errorf("the file outside changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(work+".old", "a.txt")); string(b) != "inside\n" {
		t.Errorf("the folder held was written after it moved: %q", b)
	}
	if _, err := os.Stat(filepath.Join(work+".old", "new.txt")); err == nil {
		t.Error("a new file was made in the folder held after it moved")
	}
}
