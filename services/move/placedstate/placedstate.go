// Package placedstate is test support for moves, receives and restores:
// what a placing may change in a home, as one text two states compare
// by. services/move's tests and cli's (a real lnk agent receive or
// restore killed at each step of its placing) read it the same way, so
// "as before" means one thing in both. Tests only: no binary links it
// (each binary's cmd/*/deps.txt would have to name it).
package placedstate

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
)

// State is what a placing may change in home: agent name's whole
// folder, its folder in ~/.lnk/agents, the moved notes and each secret
// (its name, agents, host and value's hash).
func State(t testing.TB, home, name string) string {
	t.Helper()
	l := caps.Layout{Home: home}
	sf, err := secrets.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Destroy()
	var sec []string
	for n, e := range sf.Secrets {
		sec = append(sec, fmt.Sprintf("%s %v %s %x", n, e.Agents, e.InternetHost, sha256.Sum256(e.Value.Bytes())))
	}
	sort.Strings(sec)
	var notes []string
	paths, err := filepath.Glob(filepath.Join(l.Settings(), "moved", "*.toml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		notes = append(notes, filepath.Base(p)+" "+string(b))
	}
	return Tree(t, l.AgentDir(name)) + "\n--- settings\n" + Tree(t, filepath.Join(l.Settings(), "agents", name)) +
		"\n--- moved\n" + strings.Join(notes, "\n") + "\n--- secrets\n" + strings.Join(sec, "\n")
}

// Tree lists everything under root, sorted: each path's type and mode,
// and its content's hash or its link's target; "(none)" when root is
// not there. What can't be read fails the test.
func Tree(t testing.TB, root string) string {
	t.Helper()
	if _, err := os.Lstat(root); os.IsNotExist(err) {
		return "(none)"
	}
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", strings.TrimPrefix(p, root), fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			tgt, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + tgt
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatalf("reading %s: %v", root, err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
