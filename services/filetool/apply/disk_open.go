package apply

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"syscall"

	"lnk.dev/lnk/internal/resolve"
)

// OpenDisk holds the files folder, the agent folder (if agent is not
// ""), and each folder write names as a root of its own. files and agent
// are absolute paths from Link's command line; their last component is
// never a link (resolve.OpenRoot).
//
// A write folder is opened from the files folder (or the agent folder,
// for a collection) through the resolver. Only where that is refused as
// another mount — the sandbox binds each written folder over the
// read-only files folder — is it opened at its own path, after the
// folder holding it was listed through the resolver and showed it a
// folder, not a link.
func OpenDisk(files, agent string, write []string) (*Disk, error) {
	d := &Disk{}
	var err error
	if d.Files, err = resolve.OpenRoot(files); err != nil {
		return nil, fmt.Errorf("the files folder: %w", err)
	}
	if agent != "" {
		if d.Agent, err = resolve.OpenRoot(agent); err != nil {
			d.Close()
			return nil, fmt.Errorf("the agent folder: %w", err)
		}
	}
	if err := checkWriteFolders(write); err != nil {
		d.Close()
		return nil, err
	}
	for _, w := range write {
		if w == "." {
			continue
		}
		base, rel, path := d.Files, w, filepath.Join(files, w)
		if d.Agent != nil && collection(w) != "" {
			base, path = d.Agent, filepath.Join(agent, w)
		}
		r, err := openMount(base, rel, path)
		if errors.Is(err, resolve.ErrNotFound) {
			continue // not there yet: written through its parent's root
		}
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("--write %q: %w", w, err)
		}
		if err := d.hold(w, r, path); err != nil {
			d.Close()
			return nil, fmt.Errorf("--write %q: %w", w, err)
		}
	}
	if d.Agent != nil {
		// The sandbox binds each of the agent folder's collections on
		// its own: held as roots of their own like the --write folders.
		// One absent, or not a folder, is left to the resolver's refusal
		// at each call.
		for _, c := range collections {
			if d.held(c) {
				continue
			}
			if r, err := openMount(d.Agent, c, filepath.Join(agent, c)); err == nil {
				if err := d.hold(c, r, filepath.Join(agent, c)); err != nil {
					d.Close()
					return nil, fmt.Errorf("the agent folder's %s: %w", c, err)
				}
			}
		}
	}
	sort.Slice(d.mounts, func(i, j int) bool { return len(d.mounts[i].name) > len(d.mounts[j].name) })
	return d, nil
}

func openMount(base *resolve.Root, rel, path string) (*resolve.Root, error) {
	r, err := base.OpenDir(rel)
	// Another mount is EXDEV, which the resolver retries a few times
	// within 50 ms: on a loaded machine the window can pass first and
	// say busy, with the same EXDEV beneath.
	if !errors.Is(err, resolve.ErrEscape) && !(errors.Is(err, resolve.ErrBusy) && errors.Is(err, syscall.EXDEV)) {
		return r, err
	}
	dir, name := filepath.Split(rel)
	dir = filepath.Clean(dir)
	ents, err := base.List(dir, resolve.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if e.Name == name && e.IsDir() {
			return resolve.OpenRoot(path)
		}
	}
	return nil, &resolve.Error{Op: "open", Path: rel, Kind: resolve.ErrLink}
}

// hold keeps r, opened at path, as the root of the folder name, with
// what it is, so a call beneath it finds out whether path still names it.
func (d *Disk) hold(name string, r *resolve.Root, path string) error {
	dev, ino, err := r.Identity()
	if err != nil {
		r.Close()
		return err
	}
	d.mounts = append(d.mounts, mount{name: name, root: r, path: path, dev: dev, ino: ino})
	return nil
}

// held reports whether name is held as a root of its own already.
func (d *Disk) held(name string) bool {
	for _, m := range d.mounts {
		if m.name == name {
			return true
		}
	}
	return false
}

// Close lets go of every root.
func (d *Disk) Close() {
	for _, r := range append([]*resolve.Root{d.Files, d.Agent}, rootsOf(d.mounts)...) {
		if r != nil {
			r.Close()
		}
	}
}

func rootsOf(ms []mount) []*resolve.Root {
	out := make([]*resolve.Root, len(ms))
	for i, m := range ms {
		out[i] = m.root
	}
	return out
}
