package apply

// Files is the seam between the calls and where the files are: the disk
// ([Disk]) now, the files bridge later. Every method takes a name the
// session has checked; an implementation still refuses, with the
// resolver's errors (resolve.ErrLink, resolve.ErrNotRegular,
// resolve.ErrChanged, …), whatever it finds unsafe when it looks.
type Files interface {
	// Read reads the regular file name whole, refusing it past max bytes,
	// and returns it with its version.
	Read(name string, max int64) ([]byte, string, error)
	// Write writes data to name, beside it then moved in place, if name is
	// still at expect: "absent" for a file that must not exist, "" for
	// whatever is there, else a version Read or Write returned.
	Write(name string, data []byte, expect string) (string, error)
	// List lists the folder name, never following a link: past max
	// entries, the first max by name, and cut true.
	List(name string, max int) (ents []Entry, cut bool, err error)
	// Walk calls fn for every entry beneath the folder name, depth first
	// in name order, never following a link; at most max entries.
	Walk(name string, max int, fn func(Entry) error) error
	// MkdirAll makes the folder name and those missing on the way (0700),
	// never through a link.
	MkdirAll(name string) error
}

// Entry is one name a listing or a walk found.
type Entry struct {
	Path string `json:"path,omitempty"` // relative to the files folder
	Name string `json:"name"`
	Type string `json:"type"` // "file", "folder", "link" or "other"
}
