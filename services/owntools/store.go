package owntools

import (
	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// Store is the definitions a start's tool bridge reaches its tools by:
// for Link Harness's own sandbox (Agent set), the agent's own run, file and
// memory tools first, then the owner's added tools (~/.lnk/sandbox/tools);
// for any other, the added tools alone. The kernel launches by it, and
// the kernel's confined bridge reads it for each tool's digest.
type Store struct {
	Home string
	Bin  string     // the folder of Link's programs (lnk-run-tool, lnk-file-tool, lnk-memory)
	Own  caps.Agent // the agent whose own tools these are; zero: none
	// PATH is the own tools' servers' PATH, the kernel's: the kernel
	// starts them by this Store, and its bridge, which has none of its
	// own, digests their definitions by it, so the two agree.
	PATH string
}

// Load returns tool name's definition.
func (s Store) Load(name string) (*tooldef.Definition, error) {
	if s.Own.ID != "" {
		path := s.PATH
		if path == "" {
			path = envOr("PATH", "/usr/local/bin:/usr/bin:/bin")
		}
		defs, err := forPath(s.Home, s.Bin, s.Own, path)
		if err != nil {
			return nil, err
		}
		var found *tooldef.Definition
		for _, d := range defs {
			if d.Name == name && found == nil {
				found = d
			} else {
				d.Destroy()
			}
		}
		if found != nil {
			return found, nil
		}
	}
	return tooldef.Store{Home: s.Home}.Load(name)
}

// Path is where an added tool's definition is (an own tool has none
// there, so its digest is never cached: it is made anew, from memory).
func (s Store) Path(name string) string { return tooldef.Store{Home: s.Home}.Path(name) }
