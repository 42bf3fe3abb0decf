package move_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/move"
)

// TestStagingHoldsCopiesNeverHardLinks: for an agent coming back, whose
// files and memory are here already, the staging folder
// (~/Link/Agents/.moving/<id>, 0700, with move.json) holds, just before
// anything is placed, only files of its own (one link each), never a
// hard link to what the agent here can write; and once placed, each
// file of the agent's is one link too.
func TestStagingHoldsCopiesNeverHardLinks(t *testing.T) {
	from, to := testenv.Home(t), testenv.Home(t)
	a := makeAgent(t, from, "main")
	if _, _, err := caps.AdoptAgent(to, a, nil); err != nil {
		t.Fatal(err)
	}
	lt := caps.Layout{Home: to}
	write(t, filepath.Join(lt.FilesDir("main"), "work", "notes.txt"), "files folder\n", 0o640)
	write(t, filepath.Join(lt.OwnDir("main"), "memory", "index.db"), "memory index", 0o600)
	pub, priv := newKey(t)
	sealed := send(t, from, "main", pub)
	stage := filepath.Join(lt.Agents(), ".moving", a.ID)
	files := 0
	restore := move.SetPlaceFault(func(n int) error {
		if n != 0 {
			return nil
		}
		if fi, err := os.Lstat(stage); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("the staging folder: %v, %v; want 0700", fi, err)
		}
		if _, err := os.Stat(filepath.Join(stage, "move.json")); err != nil {
			t.Errorf("no move.json: %v", err)
		}
		files += countLinked(t, stage)
		return nil
	})
	defer restore()
	if _, err := (&move.Receive{Home: to, Key: priv}).Run(context.Background(), bytes.NewReader(sealed)); err != nil {
		t.Fatal(err)
	}
	if files < 3 {
		t.Errorf("the staging folder held %d files: the check saw too few", files)
	}
	countLinked(t, lt.AgentDir("main"))
}

// countLinked fails t for each regular file under root with more than
// one link, and counts the files.
func countLinked(t *testing.T, root string) int {
	t.Helper()
	k := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.Error(err)
			return nil
		}
		k++
		if n := fi.Sys().(*syscall.Stat_t).Nlink; n != 1 {
			t.Errorf("%s has %d links: a hard link", p, n)
		}
		return nil
	})
	return k
}
