package resolve

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"golang.org/x/sys/unix"
)

// The names and link targets an op sequence is made of: enough to build
// links to outside, through each other and into themselves.
var (
	opComps   = []string{"a", "b", "ln", "x", "fifo", "..", ".", "", "c.txt"}
	opTargets = []string{"../outside", "../../outside", "/", "a", "..", "ln", "x/../..", "nowhere"}
)

// FuzzOpSequence lets bytes drive create, read, open, mkdir, rename,
// symlink (made through a held folder, as a hostile process beneath the
// root could), remove, list and walk inside a root. Whatever they do, the
// sibling outside/ tree hashes the same after, and the sentinel in it is
// never read.
func FuzzOpSequence(f *testing.F) {
	f.Add([]byte{3, 2, 0, 4, 2, 1, 0, 0, 2, 0, 1})
	f.Add([]byte{4, 2, 0, 0, 1, 2, 0, 0, 6, 1, 2})
	f.Add([]byte{4, 1, 2, 1, 1, 1, 2, 4, 5, 2, 2, 0, 7, 9})
	f.Add([]byte{0, 2, 0, 3, 6, 1, 3, 1, 2, 8, 3, 2, 2, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		base := t.TempDir()
		root, out := filepath.Join(base, "root"), filepath.Join(base, "outside")
		must(t, os.MkdirAll(filepath.Join(out, "deep"), 0o700))
		must(t, os.WriteFile(filepath.Join(out, "secret"), []byte(sentinel), 0o600))
		must(t, os.WriteFile(filepath.Join(out, "deep", "c.txt"), []byte(sentinel), 0o600))
		must(t, os.Mkdir(root, 0o700))
		must(t, unix.Mkfifo(filepath.Join(root, "fifo"), 0o600))
		before := treeHash(t, out)
		r := openRoot(t, root)
		if len(data) > 0 && data[0]&0x80 != 0 {
			r = r.forceFallback()
		}
		s := &opStream{data: data}
		for steps := 0; s.more() && steps < 64; steps++ {
			runOp(t, r, s)
		}
		if after := treeHash(t, out); after != before {
			t.Fatalf("outside/ changed")
		}
	})
}

type opStream struct {
	data []byte
	i    int
}

func (s *opStream) more() bool { return s.i < len(s.data) }

func (s *opStream) byte() byte {
	if s.i >= len(s.data) {
		return 0
	}
	s.i++
	return s.data[s.i-1]
}

// name reads a length (1–3 components) and that many components.
func (s *opStream) name() string {
	n := int(s.byte()%3) + 1
	p := ""
	for k := 0; k < n; k++ {
		if k > 0 {
			p += "/"
		}
		p += opComps[int(s.byte())%len(opComps)]
	}
	return p
}

func runOp(t *testing.T, r *Root, s *opStream) {
	noSentinel := func(b []byte) {
		if bytes.Contains(b, []byte(sentinel)) {
			t.Fatalf("the outside sentinel was read")
		}
	}
	switch s.byte() % 10 {
	case 0:
		r.WriteFile(s.name(), []byte("w"), WriteOptions{})
	case 1:
		b, _, _ := r.ReadFile(s.name(), 1<<10)
		noSentinel(b)
	case 2:
		if f, _, err := r.Open(s.name(), 0); err == nil {
			b, _ := io.ReadAll(io.LimitReader(f, 1<<10))
			f.Close()
			noSentinel(b)
		}
	case 3:
		r.MkdirAll(s.name(), 0)
	case 4:
		target := opTargets[int(s.byte())%len(opTargets)]
		r.inParent("symlink", s.name(), func(dirfd int, base string) error {
			return unix.Symlinkat(target, dirfd, base)
		})
	case 5:
		r.Rename(s.name(), s.name())
	case 6:
		r.Remove(s.name())
	case 7:
		r.Walk(".", WalkOptions{Max: 100}, func(e Entry) error {
			if e.Name == "secret" || e.Name == "deep" {
				t.Fatalf("walk reached outside: %s", e.Path)
			}
			return nil
		})
	case 8:
		r.List(s.name(), ListOptions{})
	case 9:
		if _, v, err := r.ReadFile(s.name(), 1<<10); err == nil {
			r.Replace(s.name(), []byte("r"), v)
		}
	}
}

// treeHash hashes every name, type, mode, link target and content under
// dir, read without following links.
func treeHash(t *testing.T, dir string) string {
	h := sha256.New()
	var paths []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		return nil
	})
	sort.Strings(paths)
	for _, p := range paths {
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %v %d\n", p, st.Mode(), st.Size())
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			fmt.Fprintf(h, "-> %s\n", l)
		case st.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			h.Write(b)
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
