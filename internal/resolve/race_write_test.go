package resolve

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWritesRacingSwaps writes, renames and removes in a folder that is
// swapped for a link to outside in a tight loop: each is refused or
// happens inside, and outside/ never changes. Nothing is removed from
// outside/ by the test, so a file made there, or one removed there, stays
// for the hash to see.
func TestWritesRacingSwaps(t *testing.T) {
	base := swapTree(t)
	root, out := filepath.Join(base, "root"), filepath.Join(base, "outside")
	must(t, os.WriteFile(filepath.Join(out, "victim"), []byte(sentinel), 0o600))
	must(t, os.WriteFile(filepath.Join(root, "d", "victim"), []byte("inside"), 0o600))
	before := treeHash(t, out)
	r := openRoot(t, root)
	for _, rr := range []*Root{r, r.forceFallback()} {
		a := startAttacker(t, root)
		done, refused := 0, 0
		step := func(err error) {
			switch {
			case err == nil:
				done++
			case errors.Is(err, ErrLink), errors.Is(err, ErrNotFound), errors.Is(err, ErrExists):
				refused++
			default:
				t.Fatalf("unexpected: %v", err)
			}
		}
		deadline := time.Now().Add(raceDeadline)
		for i := 0; i < 2000 || done == 0 || refused == 0; i++ {
			if time.Now().After(deadline) {
				t.Fatalf("the race never happened: %d done, %d refused, %d swaps", done, refused, a.swaps.Load())
			}
			_, err := rr.WriteFile("d/w", []byte("x"), WriteOptions{})
			step(err)
			step(rr.Rename("d/w", "d/w2"))
			step(rr.Remove("d/victim"))
			_, err = rr.WriteFile("d/victim", []byte("inside"), WriteOptions{Expect: Absent})
			step(err)
		}
		a.halt()
		t.Logf("fallback=%v: %d done, %d refused; %d swaps", rr.fallback, done, refused, a.swaps.Load())
	}
	if after := treeHash(t, out); after != before {
		t.Fatal("outside/ changed")
	}
}
