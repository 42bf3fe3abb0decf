package resolve

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestReadCapCountsBytesRead shows the cap holds on bytes read, not on
// what fstat said: readCapped is told the file is 10 bytes while it holds
// 10,000, as a file that grew after fstat would.
func TestReadCapCountsBytesRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big")
	must(t, os.WriteFile(p, make([]byte, 10_000), 0o600))
	for _, limit := range []int64{1, 10, 511, 512, 4096, 9_999} {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		must(t, err)
		b, err := readCapped(fd, 10, limit, false)
		unix.Close(fd)
		if err != errTooMany || b != nil {
			t.Errorf("limit %d: %d bytes, %v; want refused", limit, len(b), err)
		}
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(fd)
	if b, err := readCapped(fd, 10, 10_000, false); err != nil || len(b) != 10_000 {
		t.Fatalf("at the cap: %d bytes, %v", len(b), err)
	}
}

// TestFileGrowingDuringRead reads a file another goroutine keeps
// appending to: no read ever returns more than the cap.
func TestFileGrowingDuringRead(t *testing.T) {
	base := testTree(t)
	r := openRoot(t, filepath.Join(base, "root"))
	p := filepath.Join(base, "root", "grows")
	must(t, os.WriteFile(p, nil, 0o600))
	const limit = 64 << 10
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		chunk := make([]byte, 4<<10)
		for size := 0; ; size += len(chunk) {
			select {
			case <-stop:
				return
			default:
			}
			if size > 2*limit {
				f.Truncate(0)
				size = 0
			}
			f.Write(chunk)
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	var whole, refused int
	for i := 0; i < 3000; i++ {
		b, _, err := r.ReadFile("grows", limit)
		switch {
		case err == nil && len(b) <= limit:
			whole++
		case err == nil:
			t.Fatalf("read %d bytes past a cap of %d", len(b), limit)
		case errors.Is(err, ErrTooLarge):
			refused++
		default:
			t.Fatal(err)
		}
	}
	t.Logf("%d reads within the cap, %d refused", whole, refused)
}

// TestFIFONeverBlocks reads a named pipe with no writer, and one with a
// writer that never writes: each is refused at once, never waited on.
func TestFIFONeverBlocks(t *testing.T) {
	base := testTree(t)
	r := openRoot(t, filepath.Join(base, "root"))
	check := func(what string) {
		done := make(chan error, 2)
		go func() {
			_, _, err := r.ReadFile("fifo", 10)
			done <- err
		}()
		go func() {
			f, _, err := r.forceFallback().Open("fifo", 10)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		for range 2 {
			select {
			case err := <-done:
				if !errors.Is(err, ErrNotRegular) {
					t.Errorf("%s: %v; want ErrNotRegular", what, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s: a read of a FIFO blocked", what)
			}
		}
	}
	check("no writer")
	w, err := unix.Open(filepath.Join(base, "root", "fifo"), unix.O_RDWR|unix.O_CLOEXEC, 0)
	must(t, err)
	defer unix.Close(w)
	check("an idle writer")
}
