package resolve

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// testTree makes, in a fresh temporary folder:
//
//	root/                 the held folder
//	  a/b/c.txt           "in root"
//	  a/empty/
//	  ln-in -> a          a link inside the root
//	  ln-out -> ../outside
//	  ln-abs -> <outside> absolute
//	  ln-dangling -> nowhere
//	  ln-loop -> ln-loop
//	  fifo                a named pipe
//	  f.txt               "file"
//	outside/secret        the sentinel, never to be read
//
// and returns the base folder, holding root/ and outside/.
func testTree(t testing.TB) (base string) {
	t.Helper()
	base = t.TempDir()
	root := filepath.Join(base, "root")
	out := filepath.Join(base, "outside")
	must(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o700))
	must(t, os.MkdirAll(filepath.Join(root, "a", "empty"), 0o700))
	must(t, os.MkdirAll(out, 0o700))
	must(t, os.WriteFile(filepath.Join(root, "a", "b", "c.txt"), []byte("in root"), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "f.txt"), []byte("file"), 0o600))
	must(t, os.WriteFile(filepath.Join(out, "secret"), []byte(sentinel), 0o600))
	must(t, os.Symlink("a", filepath.Join(root, "ln-in")))
	must(t, os.Symlink("../outside", filepath.Join(root, "ln-out")))
	must(t, os.Symlink(out, filepath.Join(root, "ln-abs")))
	must(t, os.Symlink("nowhere", filepath.Join(root, "ln-dangling")))
	must(t, os.Symlink("ln-loop", filepath.Join(root, "ln-loop")))
	must(t, unix.Mkfifo(filepath.Join(root, "fifo"), 0o600))
	return base
}

const sentinel = "OUTSIDE-SENTINEL-never-read"

func openRoot(t testing.TB, path string) *Root {
	t.Helper()
	r, err := OpenRoot(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
