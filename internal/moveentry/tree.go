package moveentry

import (
	"fmt"
	"strings"
)

// Tree holds the paths an archive gave so far and refuses, with one rule
// for a move's stream and a backup's archive alike, a path that is not
// plain and under an area CheckPath allows, one given twice, one below a
// link given before it or below no folder given before it, and an area
// given as anything but a folder.
type Tree struct {
	seen map[string]Kind
}

// NewTree returns an empty Tree.
func NewTree() *Tree { return &Tree{seen: map[string]Kind{}} }

// Add checks the entry of kind k at path p in phase's areas and records
// it. It returns the path's names.
func (t *Tree) Add(phase Phase, k Kind, p string) ([]string, error) {
	names, err := CheckPath(phase, k, p)
	if err != nil {
		return nil, err
	}
	if _, dup := t.seen[p]; dup {
		return nil, fmt.Errorf("%w: %s sent twice", ErrPath, quote(p))
	}
	// Every folder on the way came before, as a folder: never a link,
	// never missing.
	for i := 1; i < len(names); i++ {
		parent := strings.Join(names[:i], "/")
		switch t.seen[parent] {
		case KindDir:
		case KindLink:
			return nil, fmt.Errorf("%w: %s lies through the link %s", ErrPath, quote(p), quote(parent))
		default:
			return nil, fmt.Errorf("%w: %s comes before its folder %s", ErrOrder, quote(p), quote(parent))
		}
	}
	if len(names) == 1 && k != KindDir {
		return nil, fmt.Errorf("%w: %s is an area, always a folder", ErrPath, quote(p))
	}
	t.seen[p] = k
	return names, nil
}

// In lists the paths seen under phase's areas.
func (t *Tree) In(p Phase) []string {
	var out []string
	for path := range t.seen {
		for _, a := range Areas[p] {
			if path == a || strings.HasPrefix(path, a+"/") {
				out = append(out, path)
			}
		}
	}
	return out
}
