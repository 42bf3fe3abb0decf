package ownerdir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

func TestOpenMakesEachFolderTheOwnersAlone(t *testing.T) {
	home := testenv.Home(t)
	d, err := Open(home, ".lnk", "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, p := range []string{".lnk", ".lnk/a", ".lnk/a/b"} {
		fi, err := os.Lstat(filepath.Join(home, p))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v", p, fi.Mode(), err)
		}
	}
}

func TestOpenRefusesALinkOrALooseFolder(t *testing.T) {
	home := testenv.Home(t)
	os.MkdirAll(filepath.Join(home, "elsewhere"), 0o700)
	os.Mkdir(filepath.Join(home, ".lnk"), 0o700)
	os.Symlink(filepath.Join(home, "elsewhere"), filepath.Join(home, ".lnk", "a"))
	if _, err := Open(home, ".lnk", "a", "b"); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("through a link: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(home, "elsewhere", "b")); err == nil {
		t.Error("a folder was made through the link")
	}
	os.Mkdir(filepath.Join(home, ".lnk", "loose"), 0o755)
	os.Chmod(filepath.Join(home, ".lnk", "loose"), 0o755)
	if _, err := Open(home, ".lnk", "loose"); err == nil || !strings.Contains(err.Error(), "0700") {
		t.Errorf("a folder others can reach: %v", err)
	}
	if _, err := Open("relative", ".lnk"); err == nil {
		t.Error("a relative HOME was taken")
	}
}
