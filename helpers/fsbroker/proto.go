package fsbroker

import "lnk.dev/lnk/internal/wire"

// The channel's states: a broker is New until its hello, then Ready.
const (
	StateNew   wire.State = 0
	StateReady wire.State = 1
)

// MaxRoots caps the folders one hello hands over.
const MaxRoots = 32

// MaxInline is the most data a write carries in its record; more travels
// in a memfd beside it.
const MaxInline = 64 << 10

// MaxWrite caps the data one write may carry in its fd.
const MaxWrite = 256 << 20

// The request table's specs, shared by the broker (serve.go) and its
// client (package fs). Names pair across the boundary: fs.Client.Open
// sends SpecOpen, which serveOpen answers.
var (
	SpecHello   = wire.Spec{Type: 1, Name: "hello", FDs: 1, MaxFDs: MaxRoots, Flags: wire.Once, States: wire.In(StateNew)}
	SpecOpen    = wire.Spec{Type: 2, Name: "open", ReplyFDs: 1, Flags: wire.Inline, States: wire.In(StateReady)}
	SpecWrite   = wire.Spec{Type: 3, Name: "write", FDs: 0, MaxFDs: 1, States: wire.In(StateReady)}
	SpecMkdir   = wire.Spec{Type: 4, Name: "mkdir", States: wire.In(StateReady)}
	SpecRename  = wire.Spec{Type: 5, Name: "rename", States: wire.In(StateReady)}
	SpecRemove  = wire.Spec{Type: 6, Name: "remove", States: wire.In(StateReady)}
	SpecList    = wire.Spec{Type: 7, Name: "list", ReplyFDs: 1, States: wire.In(StateReady)}
	SpecWalk    = wire.Spec{Type: 8, Name: "walk", ReplyFDs: 1, States: wire.In(StateReady)}
	SpecStat    = wire.Spec{Type: 9, Name: "stat", Flags: wire.Inline, States: wire.In(StateReady)}
	SpecReplace = wire.Spec{Type: 10, Name: "replace", FDs: 0, MaxFDs: 1, States: wire.In(StateReady)}
)

// HelloRoot names one folder of a hello; the fds arrive in the same
// order as the roots.
type HelloRoot struct {
	Name  string `json:"name"`
	Write bool   `json:"write"`
}

// Hello hands the broker its folders. It is the first request, once.
type Hello struct {
	Roots []HelloRoot `json:"roots"`
}

// HelloReply says how the broker confined itself before answering.
type HelloReply struct {
	LandlockABI int  `json:"landlock_abi"`
	Seccomp     bool `json:"seccomp"`
}

// OpenReq opens a regular file for reading; the reply carries its fd.
type OpenReq struct {
	Root string `json:"root"`
	Path string `json:"path"`
	Max  int64  `json:"max,omitempty"` // refuse a file larger (by fstat); 0: no cap
}

// OpenReply describes the file whose fd travels beside it.
type OpenReply struct {
	Version string `json:"version"`
	Size    int64  `json:"size"`
}

// WriteReq writes a file atomically: Data inline, or (with Data empty)
// all of the regular file (a memfd) that travels beside it.
type WriteReq struct {
	Root   string `json:"root"`
	Path   string `json:"path"`
	Mode   uint32 `json:"mode,omitempty"`
	Expect string `json:"expect,omitempty"` // a version token, "absent", or "" for none
	Data   []byte `json:"data,omitempty"`
}

// WriteReply is the new file's version.
type WriteReply struct {
	Version string `json:"version"`
}

// PathReq names one path (remove, stat).
type PathReq struct {
	Root string `json:"root"`
	Path string `json:"path"`
}

// MkdirReq makes a folder, or with All the whole chain.
type MkdirReq struct {
	Root string `json:"root"`
	Path string `json:"path"`
	Mode uint32 `json:"mode,omitempty"`
	All  bool   `json:"all,omitempty"`
}

// RenameReq renames within one root.
type RenameReq struct {
	Root      string `json:"root"`
	From      string `json:"from"`
	To        string `json:"to"`
	NoReplace bool   `json:"no_replace,omitempty"`
}

// ListReq lists a folder, or (as a walk) the tree beneath it.
type ListReq struct {
	Root       string `json:"root"`
	Path       string `json:"path"`
	SkipHidden bool   `json:"skip_hidden,omitempty"`
	MaxDepth   int    `json:"max_depth,omitempty"` // walk only
	Max        int    `json:"max,omitempty"`
}

// ListReply counts the entries; they travel beside it in a memfd as a
// JSON array of [Entry].
type ListReply struct {
	Count int `json:"count"`
}

// Entry is one listed name.
type Entry struct {
	Path string `json:"path"`
	Name string `json:"name"`
	Type uint32 `json:"type,omitempty"` // io/fs type bits; 0 for a regular file
}

// StatReply describes a name.
type StatReply struct {
	Mode    uint32 `json:"mode"` // io/fs mode bits
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
	Version string `json:"version"`
}

// Empty is a request or reply with no fields.
type Empty struct{}
