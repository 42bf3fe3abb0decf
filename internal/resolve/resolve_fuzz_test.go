package resolve

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// fuzzTree is testTree with links that climb: a/b/up -> ../.. (inside),
// a/out -> ../../outside, and a link pair that loops.
func fuzzTree(t testing.TB) string {
	base := testTree(t)
	root := filepath.Join(base, "root")
	must(t, os.Symlink("../..", filepath.Join(root, "a", "b", "up")))
	must(t, os.Symlink("../../outside", filepath.Join(root, "a", "out")))
	must(t, os.Symlink("loop2", filepath.Join(root, "loop1")))
	must(t, os.Symlink("loop1", filepath.Join(root, "loop2")))
	return base
}

var diffFlags = []int{
	unix.O_PATH,
	readFlags,
	unix.O_PATH | unix.O_DIRECTORY,
	unix.O_RDONLY | unix.O_DIRECTORY,
}

// FuzzResolveDifferential opens the same name with openat2 and with the
// fallback walk: both must reach the same inode, or both refuse it with
// the same class of error; and neither ever opens anything outside.
func FuzzResolveDifferential(f *testing.F) {
	base := fuzzTree(f)
	r, err := OpenRoot(filepath.Join(base, "root"))
	if err != nil {
		f.Fatal(err)
	}
	defer r.Close()
	fb := r.forceFallback()
	var outSt unix.Stat_t
	must(f, unix.Stat(filepath.Join(base, "outside"), &outSt))
	for _, s := range []string{"a/b/c.txt", "a/b/up/f.txt", "a/out/secret", "ln-in/b", "ln-out/secret", "ln-abs", "ln-dangling", "ln-loop", "loop1/x", "fifo", "fifo/x", "f.txt/x", ".", "a", "../outside/secret", "a//b", "a/b/"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, name string, which uint8) {
		flags := diffFlags[int(which)%len(diffFlags)]
		fd1, err1 := r.resolve("open", name, flags)
		fd2, err2 := fb.resolve("open", name, flags)
		st1, st2 := statFd(t, fd1), statFd(t, fd2)
		for _, st := range []*unix.Stat_t{st1, st2} {
			if st != nil && st.Dev == outSt.Dev && st.Ino != 0 && isOutside(t, base, st) {
				t.Fatalf("%q opened something outside the root", name)
			}
		}
		switch {
		case err1 == nil && err2 == nil:
			if st1.Dev != st2.Dev || st1.Ino != st2.Ino {
				t.Fatalf("%q (flags %#x): openat2 reached inode %d, the walk %d", name, flags, st1.Ino, st2.Ino)
			}
		case err1 != nil && err2 != nil:
			if k1, k2 := kindOf(err1), kindOf(err2); k1 != k2 {
				t.Fatalf("%q (flags %#x): openat2 says %v, the walk %v", name, flags, err1, err2)
			}
		default:
			t.Fatalf("%q (flags %#x): openat2 says %v, the walk %v", name, flags, err1, err2)
		}
	})
}

func statFd(t *testing.T, fd int) *unix.Stat_t {
	if fd < 0 {
		return nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

// isOutside reports whether st is outside/ or something in it.
func isOutside(t *testing.T, base string, st *unix.Stat_t) bool {
	for _, p := range []string{"outside", "outside/secret", "."} {
		var o unix.Stat_t
		if unix.Lstat(filepath.Join(base, p), &o) == nil && o.Dev == st.Dev && o.Ino == st.Ino {
			return true
		}
	}
	return false
}

func kindOf(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return nil
}
