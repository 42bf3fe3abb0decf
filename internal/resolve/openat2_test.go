package resolve

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openat2 copies a name shorter than stackName onto the stack and a
// longer one to the heap: names on both sides of the boundary open the
// right file, and a missing one is still ErrNotFound.
func TestOpenat2NameLengths(t *testing.T) {
	dir := t.TempDir()
	r := openRoot(t, dir)
	for _, n := range []int{1, stackName - 2, stackName - 1, stackName, stackName + 1, 1000} {
		// Components of at most 200 bytes, the last one sized to make n.
		var comps []string
		for left := n; left > 0; {
			c := min(left, 200)
			if left > c && left-c < 2 {
				c = left - 2 // room for the "/" and a last byte
			}
			comps = append(comps, strings.Repeat(string(rune('a'+len(comps))), c))
			left -= c
			if left > 0 {
				left-- // the "/"
			}
		}
		name := strings.Join(comps, "/")
		if len(name) != n {
			t.Fatalf("made a name of %d bytes, want %d", len(name), n)
		}
		if _, _, err := r.OpenFd(name, 0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%d bytes, not there yet: %v", n, err)
		}
		p := filepath.Join(dir, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(name[len(name)-1:]), 0o600))
		fd, _, err := r.OpenFd(name, 0)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		var st, want unix.Stat_t
		must(t, unix.Fstat(fd, &st))
		unix.Close(fd)
		must(t, unix.Stat(p, &want))
		if st.Ino != want.Ino || st.Dev != want.Dev {
			t.Fatalf("%d bytes: opened another file", n)
		}
		must(t, os.RemoveAll(filepath.Join(dir, comps[0])))
	}
}
