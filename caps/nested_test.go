package caps

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

func mkdirs(t *testing.T, ps ...string) {
	t.Helper()
	for _, p := range ps {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScanNestedFindsBoundedNeverFollows: the scan finds .git folders and
// files, .envrc, .vscode and .idea below the top (not at it: those are
// ReadOnly's), not past NestedDepth, not inside what it found, and never
// through a link; a protected name that is a link is refused.
func TestScanNestedFindsBoundedNeverFollows(t *testing.T) {
	home := testenv.Home(t)
	w := filepath.Join(home, "Projects")
	outside := filepath.Join(home, "elsewhere")
	deep := w
	for i := 0; i <= NestedDepth; i++ {
		deep = filepath.Join(deep, "d"+strconv.Itoa(i))
	}
	mkdirs(t, filepath.Join(w, ".git"), filepath.Join(w, "site", ".git", "x", ".vscode"), filepath.Join(w, "a", "b", ".idea"),
		filepath.Join(outside, ".git"), filepath.Join(deep, ".git"), filepath.Join(w, "wt"))
	for _, f := range []string{filepath.Join(w, "a", ".envrc"), filepath.Join(w, "wt", ".git")} {
		if err := os.WriteFile(f, []byte("gitdir: ../site/.git/worktrees/wt\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(w, "link")); err != nil {
		t.Fatal(err)
	}
	got, err := ScanNested(w)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(w, "a", ".envrc"), filepath.Join(w, "a", "b", ".idea"), filepath.Join(w, "site", ".git"), filepath.Join(w, "wt", ".git")}
	if !slices.Equal(got, want) {
		t.Fatalf("found %q, want %q", got, want)
	}
	// One level shallower than the bound is found.
	shallow := filepath.Dir(deep)
	mkdirs(t, filepath.Join(shallow, ".vscode"))
	if got, _ := ScanNested(w); !slices.Contains(got, filepath.Join(shallow, ".vscode")) {
		t.Fatalf("%s not found: %q", filepath.Join(shallow, ".vscode"), got)
	}

	if err := os.Symlink(outside+"/.git", filepath.Join(w, "a", "b", ".git")); err != nil {
		t.Fatal(err)
	}
	_, err = ScanNested(w)
	hit(t, err, ErrNestedLink)
}

// TestScanNestedCountBound: more than NestedMax found refuses, never
// lists some and leaves the rest unprotected.
func TestScanNestedCountBound(t *testing.T) {
	home := testenv.Home(t)
	w := filepath.Join(home, "Many")
	for i := 0; i <= NestedMax; i++ {
		mkdirs(t, filepath.Join(w, "r"+strconv.Itoa(i), ".git"))
	}
	_, err := ScanNested(w)
	hit(t, err, ErrScanBound)
	if err := os.RemoveAll(filepath.Join(w, "r0")); err != nil {
		t.Fatal(err)
	}
	if got, err := ScanNested(w); err != nil || len(got) != NestedMax {
		t.Fatalf("at the bound: %d found, %v", len(got), err)
	}
}

// TestAllowWriteRecordsNestedAndPins: allow --write records what the scan
// found in [files] read_only, and the compiled grants bind each
// read-only and pin the folders between; --write-git records none and
// says so in write_git; deny --write takes them out; a hand-written
// read_only outside a written folder, or inside a .git, is refused.
func TestAllowWriteRecordsNestedAndPins(t *testing.T) {
	home := testenv.Home(t)
	w := filepath.Join(home, "Projects")
	mkdirs(t, filepath.Join(w, "a", "site", ".git"), filepath.Join(w, "b", ".git"))
	if _, err := CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	file := Layout{Home: home}.SandboxFile("ada")
	c, err := Allow(home, "ada", Grants{Write: []string{"~/Projects"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSpecFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(w, "a", "site", ".git"), filepath.Join(w, "b", ".git")}
	if !slices.Equal(s.Files.ReadOnly, want) {
		t.Fatalf("read_only %q, want %q", s.Files.ReadOnly, want)
	}
	c, err = CompileAgent(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	var ro, pins []string
	for _, f := range c.NestedReadOnly {
		if f.Access.Write || f.ID == (FileID{}) {
			t.Fatalf("nested %+v", f)
		}
		ro = append(ro, f.Path)
	}
	for _, f := range c.Pinned {
		pins = append(pins, f.Path)
	}
	wantPins := []string{filepath.Join(w, "a"), filepath.Join(w, "a", "site"), filepath.Join(w, "b")}
	if !slices.Equal(ro, want) || !slices.Equal(pins, wantPins) {
		t.Fatalf("compiled read-only %q pinned %q, want %q and %q", ro, pins, want, wantPins)
	}
	lines, _, err := Permissions(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	shown := 0
	for _, l := range lines {
		if l.Grant == "files read-only" && slices.Contains(want, l.Value) && l.Route == RouteFiles {
			shown++
		}
	}
	if shown != len(want) {
		t.Fatalf("show --permissions names %d of %d nested read-only: %+v", shown, len(want), lines)
	}
	// A repository gone since is left out, not refused.
	if err := os.RemoveAll(filepath.Join(w, "b", ".git")); err != nil {
		t.Fatal(err)
	}
	if c, err = CompileAgent(home, "ada"); err != nil || len(c.NestedReadOnly) != 1 {
		t.Fatalf("after a repository went: %v %+v", err, c.NestedReadOnly)
	}

	c, err = Allow(home, "ada", Grants{WriteGit: []string{"~/Projects"}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ = ReadSpecFile(file)
	if len(s.Files.ReadOnly) != 0 || !slices.Equal(s.Files.WriteGit, []string{"~/Projects"}) || len(c.NestedReadOnly)+len(c.Pinned) != 0 {
		t.Fatalf("--write-git: file %+v, compiled %+v %+v", s.Files, c.NestedReadOnly, c.Pinned)
	}
	if c, err = Allow(home, "ada", Grants{Write: []string{"~/Projects"}}); err != nil || len(c.NestedReadOnly) != 1 {
		t.Fatalf("--write again: %v", err)
	}
	if s, _ = ReadSpecFile(file); len(s.Files.WriteGit) != 0 {
		t.Fatalf("--write after --write-git kept write_git: %+v", s.Files)
	}
	if c, err = Deny(home, "ada", Grants{Write: []string{"~/Projects"}}); err != nil || len(c.NestedReadOnly) != 0 {
		t.Fatalf("deny: %v", err)
	}
	if s, _ = ReadSpecFile(file); len(s.Files.ReadOnly) != 0 {
		t.Fatalf("deny kept read_only: %+v", s.Files)
	}

	// A recorded .git replaced by a link refuses the grants (bound, it
	// would be followed) and a rescan; --write-git drops it.
	if _, err := Allow(home, "ada", Grants{Write: []string{"~/Projects"}}); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(w, "a", "site", ".git")
	if err := os.Rename(site, site+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(site+".old", site); err != nil {
		t.Fatal(err)
	}
	_, err = CompileAgent(home, "ada")
	hit(t, err, ErrSymlink)
	_, err = Allow(home, "ada", Grants{Write: []string{"~/Projects"}})
	hit(t, err, ErrNestedLink)
	if c, err = Allow(home, "ada", Grants{WriteGit: []string{"~/Projects"}}); err != nil || len(c.NestedReadOnly) != 0 {
		t.Fatalf("--write-git over a stale entry: %v", err)
	}

	for _, ro := range []string{filepath.Join(home, "Other", ".git"), filepath.Join(w, "a", "site", ".git", "x", ".envrc"), filepath.Join(w, "a", "notes")} {
		_, err := CompileSpec(home, "", &Spec{Files: &FilesSpec{Write: []string{w}, ReadOnly: []string{ro}}})
		hit(t, err, ErrNestedOutside)
	}
}
