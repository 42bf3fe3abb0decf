package resolve

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const (
	raceOpens    = 100_000
	raceDeadline = 60 * time.Second // generous: CI runs this on 2 busy cores
)

// swapTree makes root/d/f ("inside") and root/ln -> ../outside, whose f
// is the sentinel.
func swapTree(t *testing.T) (base string) {
	base = t.TempDir()
	must(t, os.MkdirAll(filepath.Join(base, "root", "d"), 0o700))
	must(t, os.MkdirAll(filepath.Join(base, "outside"), 0o700))
	must(t, os.WriteFile(filepath.Join(base, "root", "d", "f"), []byte("inside"), 0o600))
	must(t, os.WriteFile(filepath.Join(base, "outside", "f"), []byte(sentinel), 0o600))
	must(t, os.WriteFile(filepath.Join(base, "outside", "only-outside"), nil, 0o600))
	must(t, os.Symlink("../outside", filepath.Join(base, "root", "ln")))
	return base
}

// attacker swaps root/d and root/ln with renameat2(RENAME_EXCHANGE) in a
// tight loop until stopped; it counts its swaps.
type attacker struct {
	stop  chan struct{}
	done  chan struct{}
	swaps atomic.Int64
	spun  atomic.Int64 // where its pauses add up, so they are not optimized away
}

func startAttacker(t *testing.T, root string) *attacker {
	a := &attacker{stop: make(chan struct{}), done: make(chan struct{})}
	d, ln := filepath.Join(root, "d"), filepath.Join(root, "ln")
	go func() {
		defer close(a.done)
		var spin int64
		defer func() { a.spun.Store(spin) }()
		for {
			select {
			case <-a.stop:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, ln, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("attacker: %v", err)
				return
			}
			n := a.swaps.Add(1)
			// A short pause of varying length, so the attacker never
			// settles into lockstep with a victim and always shows it the
			// same side.
			for i := range (n * 2654435761) % 64 {
				spin += i
			}
		}
	}()
	t.Cleanup(a.halt)
	return a
}

func (a *attacker) halt() {
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	<-a.done
}

// TestRaceSwapFolderForLink is the race the spec names: while a folder
// on the way is swapped for a link to outside in a tight loop, at least
// 100,000 reads through it never read the outside sentinel — with
// openat2 and with the fallback walk. A control run with plain open(2)
// must see the attacker win, or the test proved nothing.
func TestRaceSwapFolderForLink(t *testing.T) {
	base := swapTree(t)
	root := filepath.Join(base, "root")
	r := openRoot(t, root)

	t.Run("control-open(2)", func(t *testing.T) {
		a := startAttacker(t, root)
		deadline := time.Now().Add(raceDeadline)
		path := filepath.Join(root, "d", "f")
		for n := 1; ; n++ {
			b, err := os.ReadFile(path)
			if err == nil && bytes.Equal(b, []byte(sentinel)) {
				t.Logf("plain open(2) read outside after %d tries (%d swaps)", n, a.swaps.Load())
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the attacker never won against plain open(2) in %d tries (%d swaps): this race test proves nothing here", n, a.swaps.Load())
			}
		}
	})
	for _, c := range []struct {
		name string
		r    *Root
	}{{"openat2", r}, {"fallback", r.forceFallback()}} {
		t.Run(c.name, func(t *testing.T) {
			a := startAttacker(t, root)
			deadline := time.Now().Add(raceDeadline)
			var ok, refused int
			var buf [64]byte
			for n := 0; n < raceOpens || refused == 0 || ok == 0; n++ {
				// OpenFd and a pread: what the broker hands on, and the
				// bytes behind it, without ReadFile's allocations.
				var b []byte
				fd, _, err := c.r.OpenFd("d/f", 1<<10)
				if err == nil {
					k, rerr := unix.Pread(fd, buf[:], 0)
					unix.Close(fd)
					if rerr != nil {
						t.Fatal(rerr)
					}
					b = buf[:k]
				}
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
					t.Fatalf("after %d opens: %d read, %d refused, %d swaps: the attacker never raced", n, ok, refused, a.swaps.Load())
				}
			}
			a.halt()
			t.Logf("%d opens read inside, %d refused, 0 outside; %d swaps", ok, refused, a.swaps.Load())
		})
	}
}

// TestMkdirAllRacingRemoveAllAndSwaps runs MkdirAll from several
// goroutines while another removes the tree and another swaps a folder
// on the way for a link to outside. Nothing is ever made outside.
func TestMkdirAllRacingRemoveAllAndSwaps(t *testing.T) {
	base := swapTree(t)
	root := filepath.Join(base, "root")
	before := treeHash(t, filepath.Join(base, "outside"))
	for _, fallback := range []bool{false, true} {
		r := openRoot(t, root)
		if fallback {
			r = r.forceFallback()
		}
		a := startAttacker(t, root)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		var removes atomic.Int64
		wg.Add(1)
		// RemoveAll of what the makers make, by os.Root, which never
		// follows a link: a folder wrongly made outside stays there for
		// the hash below to see.
		osr, err := os.OpenRoot(root)
		must(t, err)
		defer osr.Close()
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				osr.RemoveAll("d/m")
				removes.Add(1)
			}
		}()
		var made, refused atomic.Int64
		var makers sync.WaitGroup
		for g := 0; g < 4; g++ {
			makers.Add(1)
			go func() {
				defer makers.Done()
				for i := 0; i < 2000; i++ {
					err := r.MkdirAll("d/m/x/y/z", 0)
					if err == nil {
						made.Add(1)
					} else {
						refused.Add(1)
					}
					if err != nil && !errors.Is(err, ErrLink) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrBusy) {
						t.Errorf("MkdirAll: %v", err)
						return
					}
				}
			}()
		}
		makers.Wait()
		close(stop)
		wg.Wait()
		a.halt()
		t.Logf("fallback=%v: %d made, %d refused; %d swaps, %d removes", fallback, made.Load(), refused.Load(), a.swaps.Load(), removes.Load())
	}
	if after := treeHash(t, filepath.Join(base, "outside")); after != before {
		t.Fatal("a folder was made outside the root")
	}
}

// TestWalkRacingSwaps walks the root while a folder in it is swapped for a
// link to outside: no walk ever lists a name from outside.
func TestWalkRacingSwaps(t *testing.T) {
	base := swapTree(t)
	root := filepath.Join(base, "root")
	r := openRoot(t, root)
	for _, rr := range []*Root{r, r.forceFallback()} {
		a := startAttacker(t, root)
		entered := 0
		for i := 0; i < 3000; i++ {
			err := rr.Walk(".", WalkOptions{}, func(e Entry) error {
				if e.Name == "only-outside" {
					t.Fatalf("walk listed %s from outside", e.Path)
				}
				if e.Path == "d/f" || e.Path == "ln/f" {
					entered++
				}
				return nil
			})
			if err != nil && !errors.Is(err, ErrLink) && !errors.Is(err, ErrNotFound) {
				t.Fatalf("walk: %v", err)
			}
		}
		a.halt()
		t.Logf("fallback=%v: entered the swapped folder %d times of 3000; %d swaps", rr.fallback, entered, a.swaps.Load())
	}
}
