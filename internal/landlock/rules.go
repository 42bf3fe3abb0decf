package landlock

import "errors"

// Right is what a file rule allows beneath its folder (or on its file).
type Right uint8

const (
	// Read: read files, list folders.
	Read Right = 1 << iota
	// Write: write, truncate, create, remove, rename (refer) and link
	// entries, and device ioctls.
	Write
	// Exec: execute files.
	Exec
)

// ErrNoRights refuses a file rule that grants nothing.
var ErrNoRights = errors.New("landlock rule grants no rights")

// A Rule is one thing the confined process may still do.
type Rule struct {
	kind   ruleKind
	fd     int
	rights Right
	port   uint16
}

type ruleKind uint8

const (
	kindBeneath ruleKind = iota + 1
	kindBindTCP
	kindConnectTCP
	kindAnyTCP
	kindOutsideSignals
)

// Beneath allows rights beneath the folder (or on the file) fd refers to.
// fd may be an O_PATH handle; the caller keeps it and closes it.
func Beneath(fd int, r Right) Rule { return Rule{kind: kindBeneath, fd: fd, rights: r} }

// BindTCP allows binding TCP port (ABI 4).
func BindTCP(port uint16) Rule { return Rule{kind: kindBindTCP, port: port} }

// ConnectTCP allows connecting to TCP port (ABI 4).
func ConnectTCP(port uint16) Rule { return Rule{kind: kindConnectTCP, port: port} }

// AnyTCP leaves TCP unrestricted (a broker that connects anywhere).
func AnyTCP() Rule { return Rule{kind: kindAnyTCP} }

// AllowOutsideSignals leaves signals and abstract unix sockets outside
// the domain reachable (no ABI 6 scoping).
func AllowOutsideSignals() Rule { return Rule{kind: kindOutsideSignals} }

// fsAccess is the landlock file access mask for r, for files or folders.
func fsAccess(r Right, dir bool) uint64 {
	var m uint64
	if r&Read != 0 {
		m |= fsReadFile
		if dir {
			m |= fsReadDir
		}
	}
	if r&Write != 0 {
		m |= fsWriteFile | fsTruncate | fsIoctlDev
		if dir {
			m |= fsRemoveDir | fsRemoveFile | fsMakeDir | fsMakeReg |
				fsMakeSock | fsMakeFifo | fsMakeSym | fsRefer
		}
	}
	if r&Exec != 0 {
		m |= fsExecute
	}
	return m
}
