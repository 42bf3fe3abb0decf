package resolve

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNoDescriptorLeaks runs every operation, refused and not, through
// both walks, and counts this process's open descriptors before and after:
// every descriptor the resolver opened on the way is closed.
func TestNoDescriptorLeaks(t *testing.T) {
	base := fuzzTree(t)
	r := openRoot(t, filepath.Join(base, "root"))
	everything := func() {
		for _, rr := range []*Root{r, r.forceFallback()} {
			for _, c := range readCases {
				rr.ReadFile(c.name, 1<<20)
				if f, _, err := rr.Open(c.name, 0); err == nil {
					f.Close()
				}
				rr.Stat(c.name)
				rr.List(c.name, ListOptions{})
				if d, err := rr.OpenDir(c.name); err == nil {
					d.Close()
				}
				rr.WriteFile(c.name+"-w", []byte("x"), WriteOptions{Expect: Absent})
				rr.Remove(c.name + "-w")
				rr.MkdirAll(c.name+"-d/x", 0)
				rr.Rename(c.name+"-d/x", c.name+"-d/y")
				rr.Remove(c.name + "-d/y")
				rr.Remove(c.name + "-d")
			}
			rr.Walk(".", WalkOptions{}, func(Entry) error { return nil })
			rr.Walk(".", WalkOptions{Max: 3}, func(Entry) error { return nil })
		}
	}
	everything() // the runtime opens what it opens once (its poller) here
	before := openFds(t)
	for range 3 {
		everything()
	}
	if after := openFds(t); after != before {
		t.Fatalf("%d descriptors open before, %d after", before, after)
	}
}

func openFds(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}
