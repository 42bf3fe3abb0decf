//go:build !race

// (The race detector drops sync.Pool items at random: the counts below
// hold only without it.)

package fs

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestReadAllocatesOnlyTheData: on the client's side, a 4 KiB fs.Read
// through the real broker allocates the data and nothing else (averaged
// over 200 reads, so a pool refilled after a GC does not count).
func TestReadAllocatesOnlyTheData(t *testing.T) {
	tr := newTree(t)
	c, _ := startBroker(t, tr)
	must(t, os.WriteFile(filepath.Join(tr.home, "f"), make([]byte, 4096), 0o600))
	ctx := context.Background()
	if _, err := c.Read(ctx, "home", "f"); err != nil { // fills the pools
		t.Fatal(err)
	}
	n := testing.AllocsPerRun(200, func() {
		if _, err := c.Read(ctx, "home", "f"); err != nil {
			t.Fatal(err)
		}
	})
	if n > 1 {
		t.Fatalf("fs.Read allocated %v times a call; want 1 (the data)", n)
	}
}
