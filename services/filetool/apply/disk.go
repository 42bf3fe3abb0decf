package apply

import (
	"errors"
	"io/fs"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"

	"lnk.dev/lnk/internal/resolve"
)

// collections are the agent folder's own folders, reached by name from
// the files folder's namespace.
var collections = []string{"instructions", "skills", "chats", "memory"}

// Disk is [Files] on this machine's disk, through fsbroker's resolver:
// each name opened folder by folder from a held root, never through a
// link. Make it with [OpenDisk].
type Disk struct {
	Files *resolve.Root // the files folder
	Agent *resolve.Root // the agent folder, or nil
	// mounts are folders held as roots of their own: the --write folders,
	// which the sandbox binds over the files folder, so that the
	// resolver, which never crosses a mount, reaches beneath them. Longest
	// name first.
	mounts []mount
}

type mount struct {
	name string
	root *resolve.Root
	// path is where the folder was opened, dev and ino what it was: a
	// call beneath it is refused once the path names something else
	// (stillThere).
	path     string
	dev, ino uint64
}

// errMoved refuses a call beneath a held folder that another folder
// now stands in the place of.
var errMoved = errors.New("its folder was moved or replaced since the session began")

// stillThere refuses a held folder whose path no longer names it: a link
// there now (resolve.ErrLink: a folder swapped for a link between two
// calls is refused, never followed, and never written through the handle
// either), nothing (resolve.ErrNotFound), or another folder (errMoved).
// The sandbox binds each at its own path, where it stays.
func (m mount) stillThere() error {
	// No link on the way (ownerfile walks each component where the
	// kernel has no openat2); the identity below tells another folder
	// put in its place from the one held.
	fd, err := ownerfile.OpenPath(m.path, unix.O_PATH|unix.O_DIRECTORY)
	switch {
	case errors.Is(err, unix.ENOENT):
		return &resolve.Error{Op: "open", Path: m.name, Kind: resolve.ErrNotFound, Err: err}
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
		return &resolve.Error{Op: "open", Path: m.name, Kind: resolve.ErrLink, Err: err}
	case err != nil:
		return &resolve.Error{Op: "open", Path: m.name, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &resolve.Error{Op: "open", Path: m.name, Err: err}
	}
	if st.Dev != m.dev || st.Ino != m.ino {
		return &resolve.Error{Op: "open", Path: m.name, Err: errMoved}
	}
	return nil
}

// AgentFolder says whether the collections' names (instructions/,
// skills/, chats/, memory/) name the agent folder: whether one was given.
func (d *Disk) AgentFolder() bool { return d.Agent != nil }

// root picks the root a name lies under, and the name below it; a held
// folder no longer at its path is refused (mount.stillThere).
func (d *Disk) root(name string) (*resolve.Root, string, error) {
	for _, m := range d.mounts {
		rest, ok := strings.CutPrefix(name, m.name+"/")
		if name == m.name {
			rest, ok = ".", true
		}
		if ok {
			if err := m.stillThere(); err != nil {
				return nil, "", err
			}
			return m.root, rest, nil
		}
	}
	if d.Agent != nil && collection(name) != "" {
		return d.Agent, name, nil
	}
	return d.Files, name, nil
}

// collection is the agent folder collection name starts with, or "".
func collection(name string) string {
	first, _, _ := strings.Cut(name, "/")
	for _, c := range collections {
		if first == c {
			return c
		}
	}
	return ""
}

// Read reads with the resolver's raw system calls where the folder is on
// a local filesystem ([resolve.Root.ReadFileRaw]): apply serves one call
// at a time on one P, and an ordinary call would wake the Go runtime's
// monitor thread at each read, the dearer part of apply's CPU a call.
func (d *Disk) Read(name string, max int64) ([]byte, string, error) {
	r, rel, err := d.root(name)
	if err != nil {
		return nil, "", err
	}
	b, v, err := r.ReadFileRaw(rel, max)
	return b, v.String(), err
}

func (d *Disk) Write(name string, data []byte, expect string) (string, error) {
	v, err := resolve.ParseVersion(expect)
	if err != nil {
		return "", &resolve.Error{Op: "write", Path: name, Kind: resolve.ErrChanged}
	}
	r, rel, err := d.root(name)
	if err != nil {
		return "", err
	}
	nv, err := r.WriteFile(rel, data, resolve.WriteOptions{Expect: v})
	return nv.String(), err
}

func (d *Disk) MkdirAll(name string) error {
	r, rel, err := d.root(name)
	if err != nil {
		return err
	}
	return r.MkdirAll(rel, 0o700)
}

func (d *Disk) List(name string, max int) ([]Entry, bool, error) {
	r, rel, err := d.root(name)
	if err != nil {
		return nil, false, err
	}
	ents, cut, err := r.ListFirst(rel, resolve.ListOptions{Max: max})
	out := make([]Entry, len(ents))
	for i, e := range ents {
		out[i] = entry(e, name, rel)
	}
	return out, cut, err
}

// Walk walks name's root; a held folder beneath it is walked from its
// own root in its place (the resolver would not cross into a mount).
func (d *Disk) Walk(name string, max int, fn func(Entry) error) error {
	r, rel, err := d.root(name)
	if err != nil {
		return err
	}
	var nested []mount
	err = r.Walk(rel, resolve.WalkOptions{SkipHidden: true, Max: max}, func(e resolve.Entry) error {
		ent := entry(e, name, rel)
		if ent.Type == "folder" {
			for _, m := range d.mounts {
				if m.name == ent.Path && m.root != r {
					nested = append(nested, m)
					if err := fn(ent); err != nil {
						return err
					}
					return fs.SkipDir
				}
			}
		}
		return fn(ent)
	})
	for _, m := range nested {
		if err != nil {
			break
		}
		err = d.Walk(m.name, max, fn)
	}
	return err
}

// entry is a resolver entry with its path as the session names it: the
// path below rel, put below name.
func entry(e resolve.Entry, name, rel string) Entry {
	p := e.Path
	if rel != name {
		if rel != "." {
			p = strings.TrimPrefix(p, rel+"/")
		}
		p = name + "/" + p
	}
	t := "other"
	switch {
	case e.Type == 0:
		t = "file"
	case e.Type&fs.ModeDir != 0:
		t = "folder"
	case e.Type&fs.ModeSymlink != 0:
		t = "link"
	}
	return Entry{Path: p, Name: e.Name, Type: t}
}
