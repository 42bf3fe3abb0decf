package toolbridge

import (
	"sync"

	"golang.org/x/sys/unix"
)

// A session's request needs only the digest of its tool's definition as
// it is now (another ends the session). Reading and parsing the
// definition, its --env values made secrets and wiped again, was most of
// the bridge's cost per call; the digest is kept instead beside the
// file's identity (device, inode, size, change and modification times)
// and the file read again only when that changed. tooldef writes a
// definition to a temporary file renamed in place, so a tool added again
// is always a new inode; a removed one fails lstat and is read (and
// refused) as before. Starting a session always reads the definition.
type defCache struct {
	mu sync.Mutex
	m  map[string]cachedDef
}

type cachedDef struct {
	id     fileID
	digest string
}

type fileID struct {
	dev, ino         uint64
	size             int64
	mtimeNs, ctimeNs int64
}

// pather is a Definitions that says where a tool's definition is
// (tooldef.Store); without it nothing is cached.
type pather interface{ Path(name string) string }

func (b *Bridge) defID(tool string) (fileID, bool) {
	p, ok := b.Defs.(pather)
	if !ok {
		return fileID{}, false
	}
	var st unix.Stat_t
	if err := unix.Lstat(p.Path(tool), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fileID{}, false
	}
	return fileID{dev: st.Dev, ino: st.Ino, size: st.Size, mtimeNs: st.Mtim.Nano(), ctimeNs: st.Ctim.Nano()}, true
}

// cachedDigest returns the digest of tool's definition when its file is
// the one last read; "" when it must be read.
func (b *Bridge) cachedDigest(tool string) (string, fileID, bool) {
	id, ok := b.defID(tool)
	if !ok {
		return "", id, false
	}
	b.defs.mu.Lock()
	defer b.defs.mu.Unlock()
	if c, hit := b.defs.m[tool]; hit && c.id == id {
		return c.digest, id, true
	}
	return "", id, true
}

// remember keeps digest for the file id read before it.
func (b *Bridge) remember(tool string, id fileID, digest string) {
	b.defs.mu.Lock()
	defer b.defs.mu.Unlock()
	if b.defs.m == nil {
		b.defs.m = map[string]cachedDef{}
	}
	b.defs.m[tool] = cachedDef{id: id, digest: digest}
}
