package resolve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestListFirst: past Max, ListFirst answers the first Max entries by
// name and cut, where List refuses; at Max or fewer, the whole folder
// and no cut. The folder holds more than twice Max, made in an order
// that is not the names', so the first by name are kept across the
// read, not the first the system hands over; a link in it is listed as
// a link, and a link as the folder is refused.
func TestListFirst(t *testing.T) {
	dir := t.TempDir()
	const n = 25
	for i := n - 1; i >= 0; i-- {
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", (i*7)%n)), nil, 0o600))
	}
	must(t, os.Symlink("f00", filepath.Join(dir, "a-link")))
	r := openRoot(t, dir)
	for _, c := range []struct {
		max   int
		first string
		want  int
		cut   bool
	}{
		{10, "a-link", 10, true},
		{3, "a-link", 3, true},
		{n + 1, "a-link", n + 1, false},
		{n + 5, "a-link", n + 1, false},
	} {
		ents, cut, err := r.ListFirst(".", ListOptions{Max: c.max})
		if err != nil || cut != c.cut || len(ents) != c.want {
			t.Fatalf("Max %d: %d entries, cut %v, %v; want %d, cut %v", c.max, len(ents), cut, err, c.want, c.cut)
		}
		if ents[0].Name != c.first || ents[0].Type.Type() != os.ModeSymlink {
			t.Errorf("Max %d: first %+v", c.max, ents[0])
		}
		for i := 1; i < len(ents); i++ {
			if want := fmt.Sprintf("f%02d", i-1); ents[i].Name != want {
				t.Fatalf("Max %d: entry %d is %s, want %s (the first by name)", c.max, i, ents[i].Name, want)
			}
		}
	}
	if _, err := r.List(".", ListOptions{Max: 10}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("List past Max: %v, want ErrTooLarge", err)
	}
	if _, _, err := r.ListFirst("a-link", ListOptions{Max: 10}); !errors.Is(err, ErrLink) {
		t.Errorf("ListFirst through a link: %v", err)
	}
}
