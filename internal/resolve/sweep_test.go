package resolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestIsTempName(t *testing.T) {
	hex32 := strings.Repeat("0123456789abcdef", 2)
	for name, want := range map[string]bool{
		".lnk-tmp-" + hex32:                         true,
		".lnk-tmp-" + hex32[:31]:                    false,
		".lnk-tmp-" + hex32 + "0":                   false,
		".lnk-tmp-" + strings.ToUpper(hex32):        false,
		".lnk-tmp-" + hex32[:31] + "g":              false,
		"x.lnk-tmp-" + hex32[:31]:                   false,
		".lnk-tmp" + hex32 + "0":                    false,
		"notes.lnk-tmp":                             false,
		"":                                          false,
		".f.lnk-0123456789abcdef":                   false, // the old shape: never Link's now
		".lnk-tmp-" + hex32[:16] + "/" + hex32[:15]: false,
	} {
		if got := IsTempName(name); got != want {
			t.Errorf("IsTempName(%q) = %v, want %v", name, got, want)
		}
	}
}

// A write's temporary file has the shape the sweep looks for; the write
// leaves none behind.
func TestWriteTempName(t *testing.T) {
	base := testTree(t)
	r := openRoot(t, filepath.Join(base, "root"))
	dirfd, err := r.resolve("write", "a", unix.O_RDONLY|unix.O_DIRECTORY)
	must(t, err)
	defer unix.Close(dirfd)
	tmp, fd, err := makeTemp(dirfd, 0o600)
	must(t, err)
	unix.Close(fd)
	if !IsTempName(tmp) {
		t.Fatalf("temporary file %q is not of the swept shape", tmp)
	}
	must(t, unix.Unlinkat(dirfd, tmp, 0))
	if _, err := r.WriteFile("a/w.txt", []byte("x"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(base, "root", "a"))
	for _, e := range ents {
		if IsTempName(e.Name()) {
			t.Fatalf("a finished write left %s", e.Name())
		}
	}
}

// The sweep removes old leftovers at any depth and nothing else: not a
// young one, not a link of the same shape (nor what it points to), not a
// folder, a FIFO or a hard-linked file of that shape, not a file of
// another shape, and never anything through a linked folder.
func TestSweepTemps(t *testing.T) {
	for _, walk := range []string{"openat2", "fallback"} {
		t.Run(walk, func(t *testing.T) { testSweepTemps(t, walk == "fallback") })
	}
}

func testSweepTemps(t *testing.T, fallback bool) {
	base := testTree(t)
	root := filepath.Join(base, "root")
	old := time.Now().Add(-time.Hour)
	tname := func(c byte) string { return ".lnk-tmp-" + strings.Repeat(string(c), 32) }
	mk := func(path string, age bool) string {
		p := filepath.Join(root, path)
		must(t, os.WriteFile(p, []byte("leftover"), 0o600))
		if age {
			must(t, os.Chtimes(p, old, old))
		}
		return p
	}
	oldTop := mk(tname('1'), true)
	oldDeep := mk("a/b/"+tname('2'), true)
	young := mk("a/"+tname('3'), false)
	otherShape := mk(".f.lnk-0123456789abcdef", true)
	hard := mk(tname('4'), true)
	must(t, os.Link(hard, filepath.Join(root, "a", "hardlink-of-4")))
	outsideOld := filepath.Join(base, "outside", tname('5'))
	must(t, os.WriteFile(outsideOld, []byte("outside"), 0o600))
	must(t, os.Chtimes(outsideOld, old, old))
	link := filepath.Join(root, tname('6'))
	must(t, os.Symlink(filepath.Join(base, "outside", "secret"), link))
	tv := unix.NsecToTimeval(old.UnixNano())
	must(t, unix.Lutimes(link, []unix.Timeval{tv, tv}))
	dir := filepath.Join(root, tname('7'))
	must(t, os.Mkdir(dir, 0o700))
	must(t, os.Chtimes(dir, old, old))
	fifo := filepath.Join(root, tname('8'))
	must(t, unix.Mkfifo(fifo, 0o600))
	must(t, os.Chtimes(fifo, old, old))

	r := openRoot(t, root)
	if fallback {
		r = r.forceFallback()
	}
	n, err := r.SweepTemps(".", SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("removed %d files, want 2", n)
	}
	for _, p := range []string{oldTop, oldDeep} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s: an old leftover stayed: %v", p, err)
		}
	}
	for _, p := range []string{young, otherShape, hard, outsideOld, link, dir, fifo, filepath.Join(base, "outside", "secret")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: swept: %v", p, err)
		}
	}
	// With a small enough age the young one goes too; a cap of one name
	// stops the sweep quietly before it.
	if _, err := r.SweepTemps(".", SweepOptions{Max: 1}); err != nil {
		t.Fatalf("a sweep past its cap: %v", err)
	}
	n, err = r.SweepTemps("a", SweepOptions{MinAge: time.Nanosecond})
	if err != nil || n != 1 {
		t.Fatalf("sweep of a with no age: %d, %v", n, err)
	}
	if _, err := os.Lstat(young); !os.IsNotExist(err) {
		t.Fatalf("young leftover stayed with MinAge 1ns: %v", err)
	}
}
