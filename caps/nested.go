package caps

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// What runs outside the sandbox below the top of a written folder: a
// repository's .git (core.fsmonitor, hooks: the owner's next git status
// runs them), .envrc (direnv), .vscode and .idea (tasks). lnk agent allow
// --write scans the folder for them, bounded, and records what it found
// in [files] read_only; Compile binds each read-only, and pins every
// folder between it and the written folder (a mount of its own), so the
// sandbox can neither write it nor move the folder holding it aside and
// make another in its place. [files] write_git names the written folders
// whose nested ones the owner lets it write (--write-git): not scanned.

// protectedNames are the names kept read-only: at the top of every
// written folder (Compiled.ReadOnly) and, found by the scan, below it.
var protectedNames = []string{".git", ".envrc", ".vscode", ".idea"}

func isProtectedName(n string) bool {
	for _, p := range protectedNames {
		if n == p {
			return true
		}
	}
	return false
}

// The scan's bounds: how deep below the written folder it looks (a
// repository at most NestedDepth folders below it), how many folders and
// names it reads, how many it may find, and for how long.
// Past the depth it does not look (a known gap, SECURITY.md); past the
// others it refuses, since what it did not read it cannot vouch for.
const (
	NestedDepth   = 6
	nestedFolders = 20000
	nestedNames   = 500000
	NestedMax     = 256
	nestedTime    = 10 * time.Second
)

// ScanNested lists the protected names (.git, .envrc, .vscode, .idea)
// below root, an absolute folder, in folders at most NestedDepth below it,
// not at its top (Compiled.ReadOnly holds those). It never follows a
// link: each folder is opened from the one before with O_NOFOLLOW, and a
// protected name that is a link, or neither a file nor a folder, is
// refused (bound, a link would be followed). It does not look inside
// what it found. A folder it cannot read, or a bound passed, refuses.
func ScanNested(root string) ([]string, error) {
	fd, err := ownerfile.OpenPath(root, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, &os.PathError{Op: "scan", Path: root, Err: err}
	}
	sc := &scan{root: root, deadline: time.Now().Add(nestedTime)}
	err = sc.dir(fd, root, 0)
	sort.Strings(sc.found)
	return sc.found, err
}

type scan struct {
	root     string
	deadline time.Time
	folders  int
	names    int
	found    []string
}

// dir reads the folder fd (which it closes), at path p, depth folders
// below the root.
func (sc *scan) dir(fd int, p string, depth int) error {
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	sc.folders++
	if sc.folders > nestedFolders || time.Now().After(sc.deadline) {
		return at(ErrScanBound, quote(sc.root), "grant a smaller folder, or lnk agent allow AGENT --write-git "+quote(sc.root)+" to write it without protecting the repositories in it")
	}
	for {
		ents, err := f.ReadDir(512)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return at(ErrScanBound, quote(p), "it could not be read ("+err.Error()+"): make it readable, or lnk agent allow AGENT --write-git "+quote(sc.root))
		}
		sc.names += len(ents)
		if sc.names > nestedNames || time.Now().After(sc.deadline) {
			return at(ErrScanBound, quote(sc.root), "grant a smaller folder, or lnk agent allow AGENT --write-git "+quote(sc.root)+" to write it without protecting the repositories in it")
		}
		if err := sc.entries(fd, p, depth, ents); err != nil {
			return err
		}
	}
}

// entries looks at one batch of the folder fd's entries.
func (sc *scan) entries(fd int, p string, depth int, ents []os.DirEntry) error {
	for _, e := range ents {
		name := e.Name()
		child := filepath.Join(p, name)
		if isProtectedName(name) {
			if depth == 0 {
				continue
			}
			var st unix.Stat_t
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return &os.PathError{Op: "scan", Path: child, Err: err}
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR, unix.S_IFREG:
			case unix.S_IFLNK:
				return at(ErrNestedLink, quote(child), "replace the link with what it points to, or lnk agent allow AGENT --write-git "+quote(sc.root))
			default:
				return at(ErrNestedLink, quote(child), "remove it, or lnk agent allow AGENT --write-git "+quote(sc.root))
			}
			if len(sc.found) == NestedMax {
				return at(ErrScanBound, quote(sc.root), "more than "+strconv.Itoa(NestedMax)+" repositories: grant a smaller folder, or lnk agent allow AGENT --write-git "+quote(sc.root))
			}
			sc.found = append(sc.found, child)
			continue
		}
		if !e.IsDir() || depth+1 > NestedDepth {
			continue // a link reports as one, never a folder: not followed
		}
		cfd, err := ownerfile.OpenDir(fd, name, unix.O_RDONLY)
		switch {
		case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ENOENT):
			continue // swapped for a link or a file, or gone, since it was listed
		case err != nil:
			return at(ErrScanBound, quote(child), "it could not be read ("+err.Error()+"): make it readable, or lnk agent allow AGENT --write-git "+quote(sc.root))
		}
		if err := sc.dir(cfd, child, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// compileNested turns [files] read_only into Compiled.NestedReadOnly,
// and the folders between each and its written folder into
// Compiled.Pinned, each resolved through no link and recorded by
// device and inode for the builder. One that is gone is left out; one
// that is not below a written folder, or not a protected name, is
// refused.
func compileNested(base string, home string, out *Compiled, layers []*Layer, writes []string) error {
	pinned := map[string]bool{}
	for _, ly := range layers {
		if ly.Spec.Files == nil {
			continue
		}
		for _, p := range ly.Spec.Files.ReadOnly {
			abs, err := GrantPath(home, base, p)
			if err != nil {
				return err
			}
			top := ""
			for _, w := range writes {
				if within(abs, w) && abs != w && len(w) > len(top) {
					top = w
				}
			}
			if top == "" || !isProtectedName(filepath.Base(abs)) || insideProtected(top, abs) {
				return at(ErrNestedOutside, quote(abs), "lnk agent allow AGENT --write FOLDER scans the folder again")
			}
			kind, id, err := ResolveID(abs)
			switch {
			case errors.Is(err, ErrMissing):
				continue // gone: nothing to keep; a new one is a known gap
			case err != nil:
				return err
			case kind != KindDir && kind != KindFile:
				return at(ErrNestedLink, quote(abs), "remove it, or lnk agent allow AGENT --write-git "+quote(top))
			}
			out.NestedReadOnly = append(out.NestedReadOnly, Folder{Path: abs, Access: Access{Read: true}, ID: id})
			for d := filepath.Dir(abs); d != top && within(d, top); d = filepath.Dir(d) {
				if pinned[d] {
					continue
				}
				_, id, err := ResolveID(d)
				if err != nil {
					return err
				}
				pinned[d] = true
				out.Pinned = append(out.Pinned, Folder{Path: d, Access: Access{Read: true, Write: true}, ID: id})
			}
		}
	}
	sort.Slice(out.NestedReadOnly, func(i, j int) bool { return out.NestedReadOnly[i].Path < out.NestedReadOnly[j].Path })
	sort.Slice(out.Pinned, func(i, j int) bool { return out.Pinned[i].Path < out.Pinned[j].Path })
	return nil
}

// insideProtected reports whether a folder between top and abs is itself
// a protected name: pinned (written) again, it would undo its read-only
// bind.
func insideProtected(top, abs string) bool {
	for d := filepath.Dir(abs); d != top && within(d, top); d = filepath.Dir(d) {
		if isProtectedName(filepath.Base(d)) {
			return true
		}
	}
	return false
}

// NestedUnder lists c's nested read-only paths below folder dir.
func (c *Compiled) NestedUnder(dir string) []string {
	var out []string
	for _, f := range c.NestedReadOnly {
		if within(f.Path, dir) && f.Path != dir {
			out = append(out, f.Path)
		}
	}
	return out
}
