package resolve

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestMkdirAllNeverThroughALink(t *testing.T) {
	bothWalks(t, func(t *testing.T, r *Root) {
		sfx := filepath.Base(t.Name())
		must(t, r.MkdirAll("made-"+sfx+"/x/y", 0))
		if info, err := r.Stat("made-" + sfx + "/x/y"); err != nil || !info.Mode.IsDir() || info.Mode.Perm() != 0o700 {
			t.Fatalf("made folder: %+v %v", info, err)
		}
		must(t, r.MkdirAll("made-"+sfx+"/x/y", 0)) // again: nothing to do
		for _, c := range []struct {
			name string
			want error
		}{
			{"ln-out/new", ErrLink},
			{"ln-abs/new", ErrLink},
			{"ln-in/new", ErrLink},
			{"ln-dangling/new", ErrLink},
			{"ln-dangling", ErrLink},
			{"f.txt/new", ErrNotDir},
			{"a/../x", ErrEscape},
			{"ln/", ErrInvalid},
		} {
			if err := r.MkdirAll(c.name, 0); !errors.Is(err, c.want) {
				t.Errorf("MkdirAll(%q) = %v; want %v", c.name, err, c.want)
			}
		}
	})
}

func TestRemoveAndRename(t *testing.T) {
	bothWalks(t, func(t *testing.T, r *Root) {
		sfx := filepath.Base(t.Name())
		d := "rr-" + sfx
		must(t, r.MkdirAll(d+"/sub", 0))
		if _, err := r.WriteFile(d+"/f", []byte("x"), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		must(t, r.Rename(d+"/f", d+"/sub/g"))
		if _, _, err := r.ReadFile(d+"/f", 10); !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("old name after rename: %v", err)
		}
		if _, err := r.WriteFile(d+"/h", []byte("y"), WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := r.RenameNoReplace(d+"/h", d+"/sub/g"); !errors.Is(err, ErrExists) {
			t.Fatalf("RenameNoReplace over a file: %v", err)
		}
		if err := r.Remove(d + "/sub"); err == nil {
			t.Fatal("removed a folder that is not empty")
		}
		if err := r.Rename(d+"/h", "ln-out/h"); !errors.Is(err, ErrLink) {
			t.Fatalf("rename into a link: %v", err)
		}
		if err := r.Rename("ln-out/secret", d+"/s"); !errors.Is(err, ErrLink) {
			t.Fatalf("rename out of a link: %v", err)
		}
		if err := r.Remove("ln-abs/secret"); !errors.Is(err, ErrLink) {
			t.Fatalf("remove through a link: %v", err)
		}
		if err := r.Remove("."); !errors.Is(err, ErrInvalid) {
			t.Fatalf("remove of the held folder: %v", err)
		}
		must(t, r.Remove(d+"/sub/g"))
		must(t, r.Remove(d+"/sub"))
		must(t, r.Remove(d+"/h"))
		must(t, r.Remove(d))
	})
}

func TestRemoveALinkRemovesTheLinkOnly(t *testing.T) {
	base := testTree(t)
	r := openRoot(t, filepath.Join(base, "root"))
	must(t, r.Remove("ln-abs"))
	if _, err := os.Lstat(filepath.Join(base, "outside", "secret")); err != nil {
		t.Fatalf("the link's target went too: %v", err)
	}
}

func TestListAndWalk(t *testing.T) {
	bothWalks(t, func(t *testing.T, r *Root) {
		ents, err := r.List(".", ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]fs.FileMode{}
		for _, e := range ents {
			got[e.Name] = e.Type
		}
		want := map[string]fs.FileMode{
			"a": fs.ModeDir, "f.txt": 0, "fifo": fs.ModeNamedPipe,
			"ln-in": fs.ModeSymlink, "ln-out": fs.ModeSymlink, "ln-abs": fs.ModeSymlink,
			"ln-dangling": fs.ModeSymlink, "ln-loop": fs.ModeSymlink,
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("List: %s is %v (%v); want %v", k, g, ok, v)
			}
		}
		if _, err := r.List("ln-in", ListOptions{}); !errors.Is(err, ErrLink) {
			t.Errorf("List through a link: %v", err)
		}
		if _, err := r.List(".", ListOptions{Max: 2}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("List past Max: %v", err)
		}
		var paths []string
		err = r.Walk("a", WalkOptions{}, func(e Entry) error {
			paths = append(paths, e.Path)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if w := []string{"a/b", "a/b/c.txt", "a/empty"}; !reflect.DeepEqual(paths, w) {
			t.Errorf("Walk(a) = %q; want %q", paths, w)
		}
		// The whole root: every link is reported, none entered.
		var all []string
		must(t, r.Walk(".", WalkOptions{}, func(e Entry) error {
			all = append(all, e.Path)
			return nil
		}))
		for _, p := range all {
			if len(p) > 3 && p[:3] == "ln-" && filepath.Dir(p) != "." {
				t.Errorf("walk entered a link: %s", p)
			}
		}
		paths = nil
		must(t, r.Walk("a", WalkOptions{MaxDepth: 1}, func(e Entry) error {
			paths = append(paths, e.Path)
			return nil
		}))
		if w := []string{"a/b", "a/empty"}; !reflect.DeepEqual(paths, w) {
			t.Errorf("Walk(a, depth 1) = %q; want %q", paths, w)
		}
		n := 0
		err = r.Walk(".", WalkOptions{Max: 3}, func(Entry) error { n++; return nil })
		if !errors.Is(err, ErrTooLarge) || n != 3 {
			t.Errorf("Walk past Max: %d entries, %v", n, err)
		}
	})
}

func TestWalkSkipsHidden(t *testing.T) {
	base := testTree(t)
	r := openRoot(t, filepath.Join(base, "root"))
	must(t, r.MkdirAll(".hidden/deep", 0))
	if _, err := r.WriteFile(".hidden/deep/x", []byte("x"), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	must(t, r.Walk(".", WalkOptions{SkipHidden: true}, func(e Entry) error {
		if e.Name[0] == '.' || filepath.Dir(e.Path) == ".hidden" {
			t.Errorf("hidden entry reported: %s", e.Path)
		}
		return nil
	}))
}
