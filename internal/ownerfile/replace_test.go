package ownerfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// TestReplacementWritesThroughItsFolderHandle opens a folder, then swaps
// a link to another folder into its place before a Replacement is made
// and committed: the file lands in the folder opened, never where the
// link points. The positive control: the file is whole, 0600, and
// replaced a link at its name as itself, the link's target untouched.
func TestReplacementWritesThroughItsFolderHandle(t *testing.T) {
	root := t.TempDir()
	dir, outside := filepath.Join(root, "backup"), filepath.Join(root, "outside")
	os.Mkdir(dir, 0o700)
	os.Mkdir(outside, 0o700)
	victim := filepath.Join(outside, "victim")
	os.WriteFile(victim, []byte("not Link's"), 0o600)
	os.Symlink(victim, filepath.Join(dir, "a.tar"))
	fd, err := ownerfile.OpenPath(dir, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	// The folder swapped for a link after it was opened.
	os.Rename(dir, dir+".moved")
	os.Symlink(outside, dir)

	r, err := ownerfile.NewReplacement(fd, "a.tar", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	r.Write([]byte("archive"))
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "not Link's" {
		t.Errorf("the link's target was written: %q", b)
	}
	if names, _ := os.ReadDir(outside); len(names) != 1 {
		t.Errorf("written where the folder's link points: %v", names)
	}
	fi, err := os.Lstat(filepath.Join(dir+".moved", "a.tar"))
	if err != nil || fi.Mode() != 0o600 {
		t.Fatalf("a.tar in the folder opened: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir+".moved", "a.tar")); string(b) != "archive" {
		t.Errorf("a.tar: %q", b)
	}
	names, _ := os.ReadDir(dir + ".moved")
	if len(names) != 1 {
		t.Errorf("left beside it: %v", names)
	}
}

// TestReplacementAbortLeavesNothing: an aborted replacement leaves the
// old file as it was and no hidden file.
func TestReplacementAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.tar"), []byte("old"), 0o600)
	fd, _ := ownerfile.OpenPath(dir, unix.O_PATH|unix.O_DIRECTORY)
	defer unix.Close(fd)
	r, err := ownerfile.NewReplacement(fd, "a.tar", 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Write([]byte("half"))
	r.Abort()
	if b, _ := os.ReadFile(filepath.Join(dir, "a.tar")); string(b) != "old" {
		t.Errorf("a.tar: %q", b)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("left: %v", names)
	}
}
