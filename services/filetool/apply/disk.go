package apply

import (
	"io/fs"
	"strings"

	"lnk.dev/lnk/helpers/fsbroker/resolve"
)

// collections are the agent folder's own folders, reached by name from
// the files folder's namespace.
var collections = []string{"instructions", "skills", "chats", "memory"}

// Disk is [Files] on this machine's disk, through fsbroker's resolver:
// each name opened folder by folder from the held root, never through a
// link.
type Disk struct {
	Files *resolve.Root // the files folder
	Agent *resolve.Root // the agent folder, or nil
}

// root picks the root a name lies under.
func (d *Disk) root(name string) *resolve.Root {
	if d.Agent != nil && collection(name) != "" {
		return d.Agent
	}
	return d.Files
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

func (d *Disk) Read(name string, max int64) ([]byte, string, error) {
	b, v, err := d.root(name).ReadFile(name, max)
	return b, v.String(), err
}

func (d *Disk) Write(name string, data []byte, expect string) (string, error) {
	v, err := resolve.ParseVersion(expect)
	if err != nil {
		return "", &resolve.Error{Op: "write", Path: name, Kind: resolve.ErrChanged}
	}
	nv, err := d.root(name).WriteFile(name, data, resolve.WriteOptions{Expect: v})
	return nv.String(), err
}

func (d *Disk) List(name string) ([]Entry, error) {
	ents, err := d.root(name).List(name, resolve.ListOptions{Max: maxList})
	out := make([]Entry, len(ents))
	for i, e := range ents {
		out[i] = entry(e)
	}
	return out, err
}

func (d *Disk) Walk(name string, max int, fn func(Entry) error) error {
	return d.root(name).Walk(name, resolve.WalkOptions{SkipHidden: true, Max: max}, func(e resolve.Entry) error {
		return fn(entry(e))
	})
}

func entry(e resolve.Entry) Entry {
	t := "other"
	switch {
	case e.Type == 0:
		t = "file"
	case e.Type&fs.ModeDir != 0:
		t = "folder"
	case e.Type&fs.ModeSymlink != 0:
		t = "link"
	}
	return Entry{Path: e.Path, Name: e.Name, Type: t}
}
