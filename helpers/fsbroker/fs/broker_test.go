package fs

import (
	"bytes"
	"context"
	"errors"
	iofs "io/fs"
	"os"
	"path/filepath"
	"testing"

	"lnk.dev/lnk/helpers/fsbroker"
	"lnk.dev/lnk/internal/resolve"
)

func TestOperationsThroughTheBroker(t *testing.T) {
	tr := newTree(t)
	c, _ := startBroker(t, tr)
	ctx := context.Background()

	must(t, c.MkdirAll(ctx, "home", "a/b", 0o700))
	v1, err := c.Write(ctx, "home", "a/b/c.txt", []byte("one"), WriteOptions{Expect: resolve.Absent})
	must(t, err)
	got, err := c.Read(ctx, "home", "a/b/c.txt")
	must(t, err)
	if string(got) != "one" {
		t.Fatalf("read %q, want one", got)
	}
	// The file really is on disk where it belongs.
	if b, _ := os.ReadFile(filepath.Join(tr.home, "a/b/c.txt")); string(b) != "one" {
		t.Fatalf("on disk: %q", b)
	}
	v2, err := c.Replace(ctx, "home", "a/b/c.txt", []byte("two"), v1)
	must(t, err)
	if _, err := c.Replace(ctx, "home", "a/b/c.txt", []byte("three"), v1); !errors.Is(err, resolve.ErrChanged) {
		t.Fatalf("replace naming a stale version: %v, want ErrChanged", err)
	}
	if _, err := c.Write(ctx, "home", "a/b/c.txt", []byte("x"), WriteOptions{Expect: resolve.Absent}); !errors.Is(err, resolve.ErrExists) {
		t.Fatalf("write naming absent over a file: %v, want ErrExists", err)
	}
	st, err := c.Stat(ctx, "home", "a/b/c.txt")
	must(t, err)
	if st.Version != v2.String() || st.Size != 3 {
		t.Fatalf("stat says %+v, want version %s size 3", st, v2)
	}

	// A write larger than a record travels in a memfd.
	big := bytes.Repeat([]byte("0123456789abcdef"), fsbroker.MaxInline/8)
	_, err = c.Write(ctx, "home", "big", big, WriteOptions{})
	must(t, err)
	if got, err := c.Read(ctx, "home", "big"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("big file read back %d bytes, %v", len(got), err)
	}

	must(t, c.Rename(ctx, "home", "a/b/c.txt", "a/d.txt", false))
	ents, err := c.List(ctx, "home", "a", resolve.ListOptions{})
	must(t, err)
	if len(ents) != 2 || ents[0].Name != "b" || ents[1].Name != "d.txt" {
		t.Fatalf("list a: %+v", ents)
	}
	walk, err := c.Walk(ctx, "home", ".", resolve.WalkOptions{})
	must(t, err)
	if len(walk) != 5 { // a, a/b, a/d.txt, big, ln
		t.Fatalf("walk found %d entries: %+v", len(walk), walk)
	}
	must(t, c.Remove(ctx, "home", "a/d.txt"))
	if _, err := c.Read(ctx, "home", "a/d.txt"); !errors.Is(err, iofs.ErrNotExist) {
		t.Fatalf("read after remove: %v, want not found", err)
	}
}

func TestRefusalsKeepTheirKind(t *testing.T) {
	tr := newTree(t)
	c, _ := startBroker(t, tr)
	ctx := context.Background()
	cases := []struct {
		name string
		do   func() error
		want error
	}{
		{"read through a link", func() error { _, err := c.Read(ctx, "home", "ln"); return err }, resolve.ErrLink},
		{"read with ..", func() error { _, err := c.Read(ctx, "home", "../outside/sentinel"); return err }, resolve.ErrEscape},
		{"absolute name", func() error { _, err := c.Read(ctx, "home", "/etc/passwd"); return err }, resolve.ErrEscape},
		{"trailing slash", func() error { _, err := c.Read(ctx, "home", "a/"); return err }, resolve.ErrInvalid},
		{"read a folder", func() error {
			must(t, c.Mkdir(ctx, "home", "dir", 0))
			_, err := c.Read(ctx, "home", "dir")
			return err
		}, resolve.ErrNotRegular},
		{"write a read-only root", func() error {
			_, err := c.Write(ctx, "conf", "sandbox.toml", []byte("x"), WriteOptions{})
			return err
		}, fsbroker.ErrReadOnly},
		{"remove in a read-only root", func() error { return c.Remove(ctx, "conf", "sandbox.toml") }, fsbroker.ErrReadOnly},
		{"a root never handed over", func() error { _, err := c.Read(ctx, "secrets", "x"); return err }, fsbroker.ErrNoRoot},
		{"open past its cap", func() error {
			_, _, err := c.ReadFile(ctx, "conf", "sandbox.toml", 2)
			return err
		}, resolve.ErrTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.do(); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	// Read-only means read: the conf root still reads.
	if b, err := c.Read(ctx, "conf", "sandbox.toml"); err != nil || string(b) != "[files]\n" {
		t.Fatalf("read of a read-only root: %q, %v", b, err)
	}
}
