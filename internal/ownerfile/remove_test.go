package ownerfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRemoveAllFollowsNoLink: a tree holding links to a folder and a file
// outside it is removed, links as themselves, and what they point to is
// untouched; a missing name is no error; a tree deeper than
// MaxRemoveDepth is refused, and what is left still removes from above.
func TestRemoveAllFollowsNoLink(t *testing.T) {
	dir, fd := root(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "keep"), []byte("mine"), 0o600)
	tree := filepath.Join(dir, "tree")
	os.MkdirAll(filepath.Join(tree, "a", "b"), 0o700)
	os.WriteFile(filepath.Join(tree, "a", "b", "f"), []byte("x"), 0o600)
	os.Symlink(outside, filepath.Join(tree, "a", "dirlink"))
	os.Symlink(filepath.Join(outside, "keep"), filepath.Join(tree, "filelink"))
	if err := RemoveAll(fd, "tree"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(tree); !os.IsNotExist(err) {
		t.Fatalf("tree still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "keep")); err != nil || string(b) != "mine" {
		t.Fatalf("followed a link: %q %v", b, err)
	}
	if err := RemoveAll(fd, "tree"); err != nil {
		t.Fatalf("a missing name: %v", err)
	}
	if err := RemoveAll(fd, "../x"); err == nil {
		t.Fatal("a name with a slash was taken")
	}
	deep := filepath.Join(dir, "deep")
	p := deep
	for i := 0; i <= MaxRemoveDepth+1; i++ {
		p = filepath.Join(p, "d")
	}
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := RemoveAll(fd, "deep"); err == nil || !strings.Contains(err.Error(), "deep") {
		t.Fatalf("a tree deeper than the bound: %v", err)
	}
	var st unix.Stat_t
	if unix.Fstatat(fd, "deep", &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		t.Fatal("the deep tree was removed past the bound")
	}
}
