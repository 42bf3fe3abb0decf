package resolve

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReadFileRawIsReadFile: ReadFileRaw answers every case of the read
// table as ReadFile does — the same bytes and version, the same refusal —
// with openat2 and with the fallback walk.
func TestReadFileRawIsReadFile(t *testing.T) {
	bothWalks(t, func(t *testing.T, r *Root) {
		for _, c := range readCases {
			for _, max := range []int64{1 << 20, 4, 0} {
				want, wv, werr := r.ReadFile(c.name, max)
				got, gv, gerr := r.ReadFileRaw(c.name, max)
				if !bytes.Equal(got, want) || gv != wv || (gerr == nil) != (werr == nil) {
					t.Errorf("ReadFileRaw(%q, %d) = %q, %v, %v; ReadFile %q, %v, %v", c.name, max, got, gv, gerr, want, wv, werr)
				}
				var ge, we *Error
				if errors.As(gerr, &ge) && errors.As(werr, &we) && (ge.Kind != we.Kind || ge.Op != we.Op) {
					t.Errorf("ReadFileRaw(%q, %d): %v; ReadFile: %v", c.name, max, gerr, werr)
				}
				if max == 1<<20 && !errors.Is(gerr, c.want) && c.want != nil {
					t.Errorf("ReadFileRaw(%q) = %v; want %v", c.name, gerr, c.want)
				}
			}
		}
	})
}

// TestReadFileRawOnlyOnALocalFilesystem: the raw calls are taken for a
// folder on one of localFS, as fstatfs says, and never for another (here
// procfs), which ReadFileRaw still reads, through ReadFile's calls.
func TestReadFileRawOnlyOnALocalFilesystem(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600))
	var sf unix.Statfs_t
	must(t, unix.Statfs(dir, &sf))
	r := openRoot(t, dir)
	if got, want := r.localFS(), slices.Contains(localFS, int64(sf.Type)); got != want {
		t.Fatalf("localFS() = %v for a folder of type %#x; want %v", got, sf.Type, want)
	}
	if b, _, err := r.ReadFileRaw("f", 10); err != nil || string(b) != "x" {
		t.Fatalf("ReadFileRaw: %q, %v", b, err)
	}
	p := openRoot(t, fmt.Sprintf("/proc/%d", os.Getpid())) // /proc/self is a link
	if p.localFS() {
		t.Fatal("procfs taken for a local filesystem")
	}
	if b, _, err := p.ReadFileRaw("status", 1<<20); err != nil || !bytes.Contains(b, []byte("Pid:")) {
		t.Fatalf("ReadFileRaw of procfs: %q, %v", b, err)
	}
}

// TestReadCapCountsBytesReadRaw is TestReadCapCountsBytesRead for the
// raw reads.
func TestReadCapCountsBytesReadRaw(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	must(t, os.WriteFile(p, make([]byte, 10_000), 0o600))
	for _, limit := range []int64{1, 4096, 9_999, 10_000} {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		must(t, err)
		b, err := readCapped(fd, 10, limit, true)
		unix.Close(fd)
		if limit < 10_000 && (err != errTooMany || b != nil) {
			t.Errorf("limit %d: %d bytes, %v; want refused", limit, len(b), err)
		}
		if limit == 10_000 && (err != nil || len(b) != 10_000) {
			t.Errorf("at the cap: %d bytes, %v", len(b), err)
		}
	}
}

// TestRaceSwapFolderForLinkRaw is TestRaceSwapFolderForLink for
// ReadFileRaw: while a folder on the way is swapped for a link to outside,
// no read through it reads the outside sentinel.
func TestRaceSwapFolderForLinkRaw(t *testing.T) {
	base := swapTree(t)
	root := filepath.Join(base, "root")
	r := openRoot(t, root)
	a := startAttacker(t, root)
	deadline := time.Now().Add(raceDeadline)
	var ok, refused int
	for n := 0; n < raceOpens || refused == 0 || ok == 0; n++ {
		b, _, err := r.ReadFileRaw("d/f", 1<<10)
		switch {
		case err == nil && bytes.Equal(b, []byte("inside")):
			ok++
		case err == nil:
			t.Fatalf("read %q through a swapped folder", b)
		case errors.Is(err, ErrLink), errors.Is(err, ErrNotFound), errors.Is(err, ErrBusy):
			refused++
		default:
			t.Fatalf("unexpected: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d reads: %d read, %d refused, %d swaps: the attacker never raced", n, ok, refused, a.swaps.Load())
		}
	}
	a.halt()
	t.Logf("local=%v: %d reads inside, %d refused, 0 outside; %d swaps", r.localFS(), ok, refused, a.swaps.Load())
}
