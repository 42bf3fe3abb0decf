package resolve

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

// WalkOptions bound a walk (find's).
type WalkOptions struct {
	SkipHidden bool // neither report nor enter a name starting with "."
	MaxDepth   int  // levels reported below name, as find -maxdepth; 0 means 32
	Max        int  // entries reported in all, else ErrTooLarge; 0 means 100,000
}

// Walk calls fn for every entry beneath the folder name, depth first in
// name order, never following a link: each folder is opened from the one
// holding it (openat2, RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS), so a folder
// swapped for a link while the walk runs is not entered. fn may return
// fs.SkipDir for a folder to leave it unentered, or fs.SkipAll to stop.
// Past MaxDepth the walk reports a folder but does not enter it; past Max
// entries it stops with ErrTooLarge, after reporting Max entries.
func (r *Root) Walk(name string, opt WalkOptions, fn func(Entry) error) error {
	fd, err := r.resolve("walk", name, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	if opt.MaxDepth <= 0 {
		opt.MaxDepth = 32
	}
	if opt.Max <= 0 {
		opt.Max = defaultMaxEntries
	}
	w := walker{r: r, opt: opt, fn: fn}
	err = w.dir(fd, name, 0)
	unix.Close(fd)
	if err == fs.SkipAll {
		return nil
	}
	return err
}

type walker struct {
	r     *Root
	opt   WalkOptions
	fn    func(Entry) error
	count int
}

// dir reports the entries of the open folder fd (at path dir) and enters
// its folders. fd stays the caller's.
func (w *walker) dir(fd int, dir string, depth int) error {
	ents, _, err := readDir(fd, dir, w.opt.SkipHidden, w.opt.Max-w.count, false)
	if err != nil && !(errors.Is(err, errTooMany) && len(ents) > 0) {
		if err == errTooMany {
			return refuse("walk", dir, ErrTooLarge)
		}
		return fail("walk", dir, err)
	}
	for _, e := range ents {
		if w.count >= w.opt.Max {
			return refuse("walk", e.Path, ErrTooLarge)
		}
		w.count++
		ferr := w.fn(e)
		if ferr == fs.SkipDir && e.IsDir() {
			continue
		}
		if ferr != nil {
			return ferr
		}
		if !e.IsDir() || depth+1 >= w.opt.MaxDepth {
			continue
		}
		sub, oerr := w.r.at(fd, "walk", e.Name, unix.O_RDONLY|unix.O_DIRECTORY)
		if oerr != nil {
			var re *Error
			if errors.As(oerr, &re) && (re.Kind == ErrLink || re.Kind == ErrNotFound || re.Kind == ErrNotDir || re.Kind == ErrEscape) {
				continue // swapped, removed or a mount since it was listed: not entered
			}
			return relabel(oerr, e.Path)
		}
		err := w.dir(sub, e.Path, depth+1)
		unix.Close(sub)
		if err != nil {
			return err
		}
	}
	if err != nil { // the listing itself was cut at the cap
		return refuse("walk", dir, ErrTooLarge)
	}
	return nil
}
