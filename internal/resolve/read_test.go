package resolve

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// bothWalks runs f with openat2 and again with the fallback walk forced.
func bothWalks(t *testing.T, f func(t *testing.T, r *Root)) {
	base := testTree(t)
	r := openRoot(t, filepath.Join(base, "root"))
	t.Run("openat2", func(t *testing.T) { f(t, r) })
	t.Run("fallback", func(t *testing.T) { f(t, r.forceFallback()) })
}

func TestReadRefusals(t *testing.T) {
	bothWalks(t, func(t *testing.T, r *Root) {
		for _, c := range readCases {
			b, _, err := r.ReadFile(c.name, 1<<20)
			if c.want == nil {
				if err != nil {
					t.Errorf("ReadFile(%q): %v", c.name, err)
				}
				continue
			}
			if !errors.Is(err, c.want) {
				t.Errorf("ReadFile(%q) = %q, %v; want %v", c.name, b, err, c.want)
			}
			f, _, err := r.Open(c.name, 0)
			if !errors.Is(err, c.want) {
				t.Errorf("Open(%q) = %v; want %v", c.name, err, c.want)
			}
			if f != nil {
				f.Close()
			}
		}
	})
}

func TestOpenReturnsFile(t *testing.T) {
	bothWalks(t, func(t *testing.T, r *Root) {
		f, v, err := r.Open("a/b/c.txt", 100)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil || string(b) != "in root" {
			t.Fatalf("read %q, %v", b, err)
		}
		if v.IsZero() || v.IsAbsent() || v.Size != 7 {
			t.Fatalf("version %+v", v)
		}
		if _, _, err := r.Open("a/b/c.txt", 6); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("Open past cap: %v", err)
		}
	})
}

// TestOpenFlags: Open's file is close-on-exec, blocking (O_NONBLOCK
// cleared) and read-only; OpenFd's the same but for O_NONBLOCK.
func TestOpenFlags(t *testing.T) {
	bothWalks(t, func(t *testing.T, r *Root) {
		raw, _, err := r.OpenFd("f.txt", 0)
		if err != nil {
			t.Fatal(err)
		}
		fl, err := unix.FcntlInt(uintptr(raw), unix.F_GETFL, 0)
		unix.Close(raw)
		if err != nil || fl&unix.O_ACCMODE != unix.O_RDONLY {
			t.Fatalf("OpenFd status flags %#x, %v", fl, err)
		}
		f, _, err := r.Open("f.txt", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fd := int(f.Fd())
		fl, err = unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		must(t, err)
		if fl&unix.O_NONBLOCK != 0 || fl&unix.O_ACCMODE != unix.O_RDONLY {
			t.Errorf("status flags %#x", fl)
		}
		fdfl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		must(t, err)
		if fdfl&unix.FD_CLOEXEC == 0 {
			t.Error("not close-on-exec")
		}
	})
}

// readCases are the names every walk must treat alike, in testTree.
var readCases = []struct {
	name string
	want error
}{
	{"a/b/c.txt", nil},
	{"f.txt", nil},
	{"ln-in/b/c.txt", ErrLink},
	{"ln-in", ErrLink},
	{"ln-out/secret", ErrLink},
	{"ln-abs/secret", ErrLink},
	{"ln-dangling", ErrLink},
	{"ln-loop", ErrLink},
	{"ln-loop/x", ErrLink},
	{"fifo", ErrNotRegular},
	{"a", ErrNotRegular},
	{".", ErrNotRegular},
	{"missing", ErrNotFound},
	{"a/missing/x", ErrNotFound},
	{"f.txt/x", ErrNotDir},
	{"../outside/secret", ErrEscape},
	{"a/../../outside/secret", ErrEscape},
	{"/etc/passwd", ErrEscape},
	{"ln/", ErrInvalid},
	{"ln/.", ErrInvalid},
	{"ln//", ErrInvalid},
	{"a//b/c.txt", ErrInvalid},
	{"./f.txt", ErrInvalid},
	{"", ErrInvalid},
	{"a\x00b", ErrInvalid},
}

func TestStat(t *testing.T) {
	bothWalks(t, func(t *testing.T, r *Root) {
		for _, c := range []struct {
			name string
			mode fs.FileMode
			want error
		}{
			{"f.txt", 0, nil},
			{"a", fs.ModeDir, nil},
			{"fifo", fs.ModeNamedPipe, nil},
			{"ln-in", 0, ErrLink},
			{"ln-out/secret", 0, ErrLink},
			{"missing", 0, ErrNotFound},
		} {
			info, err := r.Stat(c.name)
			if c.want != nil {
				if !errors.Is(err, c.want) {
					t.Errorf("Stat(%q) = %v; want %v", c.name, err, c.want)
				}
				continue
			}
			if err != nil || info.Mode.Type() != c.mode || info.Nlink == 0 {
				t.Errorf("Stat(%q) = %+v, %v", c.name, info, err)
			}
		}
		info, _ := r.Stat("f.txt")
		_, v, _ := r.ReadFile("f.txt", 100)
		if info.Version != v || info.Size != 4 {
			t.Errorf("Stat version %+v, read version %+v", info.Version, v)
		}
	})
}
