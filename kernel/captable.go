package kernel

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/refusal"
)

// Refusal is a rule's refusal of a capability use (Link's one refusal
// shape, internal/refusal): errors.Is tells which rule
// ([ErrUnknownHandle], [ErrRevokedHandle], [ErrOtherAgent]).
type Refusal = refusal.Refusal

// capRefused is rule's refusal of the handle whose short id is handle.
func capRefused(rule error, handle string) *Refusal {
	return &Refusal{Reason: fmt.Sprintf("capability %s: %v", handle, rule), Rule: rule.Error(), Err: rule}
}

// The rules a capability use can fail.
var (
	ErrUnknownHandle = errors.New("no such capability")
	ErrRevokedHandle = errors.New("capability revoked when its start ended")
	ErrOtherAgent    = errors.New("capability belongs to another agent")
	ErrBadHandle     = errors.New("handle is not 32 hex digits")
	ErrNoRight       = errors.New("capability does not grant that right")
	ErrOtherStart    = errors.New("capability is another start's")
)

// Handle names a capability: 128 random bits.
type Handle [16]byte

// String is the handle in lowercase hex.
func (h Handle) String() string { return hex.EncodeToString(h[:]) }

// Short is the handle's first 8 hex digits, what the audit log names.
func (h Handle) Short() string { return hex.EncodeToString(h[:4]) }

// ParseHandle reads 32 hex digits.
func ParseHandle(s string) (Handle, error) {
	var h Handle
	if len(s) != 32 {
		return h, ErrBadHandle
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, ErrBadHandle
	}
	return h, nil
}

// Rights are what a capability allows.
type Rights uint8

// The rights.
const (
	RightRead Rights = 1 << iota
	RightWrite
	// RightBind alone lets lnk bind the folder into its start's sandbox
	// (open-folder), and nothing the kernel serves: no read, no write,
	// no fsbroker root. It is a folder of the agent's own grants (the
	// kernel's compile) that holds Link's settings or the agents' folders,
	// which that sandbox hides under an empty mount (--read '~').
	RightBind
)

func (r Rights) String() string {
	switch r {
	case RightRead:
		return "read"
	case RightWrite:
		return "write"
	case RightRead | RightWrite:
		return "read,write"
	case RightBind:
		return "bind"
	}
	return "none"
}

// Cap is one capability: a folder handle (or a route) with rights, bound
// to an agent's start.
type Cap struct {
	Handle Handle
	Agent  string
	Start  uint64
	Route  string // what it names: a folder's path, a broker route
	Rights Rights
	dir    *os.File // O_PATH folder handle; closed at revocation
}

// maxRevoked bounds how many revoked handles are remembered, only to say
// "revoked" rather than "no such capability" in the log.
const maxRevoked = 4096

// CapTable maps handles to capabilities. Lookup is one map access.
type CapTable struct {
	mu      sync.RWMutex
	caps    map[Handle]*Cap
	starts  map[uint64][]Handle // a start's capabilities
	agents  map[uint64]string   // a start's agent
	revoked map[Handle]struct{}
	order   []Handle // revoked, oldest first
	next    uint64   // the last start's id
}

// Begin registers a new start of agent and returns its id. Start ids
// are never reused within a kernel's life.
func (t *CapTable) Begin(agent string) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	t.agents[t.next] = agent
	t.starts[t.next] = nil
	return t.next
}

// NewCapTable returns an empty table.
func NewCapTable() *CapTable {
	return &CapTable{caps: map[Handle]*Cap{}, starts: map[uint64][]Handle{},
		agents: map[uint64]string{}, revoked: map[Handle]struct{}{}}
}

// Grant adds a capability for agent's start; the table takes dir (which
// may be nil for a route) and closes it at revocation.
func (t *CapTable) Grant(agent string, start uint64, route string, rights Rights, dir *os.File) (Handle, error) {
	var h Handle
	if _, err := rand.Read(h[:]); err != nil {
		return h, err
	}
	c := &Cap{Handle: h, Agent: agent, Start: start, Route: route, Rights: rights, dir: dir}
	t.mu.Lock()
	defer t.mu.Unlock()
	if a, ok := t.agents[start]; !ok || a != agent {
		return h, fmt.Errorf("start %d is not %s's", start, agent)
	}
	t.caps[h] = c
	t.starts[start] = append(t.starts[start], h)
	return h, nil
}

// Lookup returns agent's capability named h, refusing an unknown,
// revoked or other agent's handle with a [*Refusal].
func (t *CapTable) Lookup(h Handle, agent string) (Cap, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.lookup(h, agent)
}

func (t *CapTable) lookup(h Handle, agent string) (Cap, error) {
	c, ok := t.caps[h]
	if !ok {
		if _, was := t.revoked[h]; was {
			return Cap{}, capRefused(ErrRevokedHandle, h.Short())
		}
		return Cap{}, capRefused(ErrUnknownHandle, h.Short())
	}
	if c.Agent != agent {
		return Cap{}, capRefused(ErrOtherAgent, h.Short())
	}
	cc := *c
	cc.dir = nil
	return cc, nil
}

// OpenDir returns agent's capability named h and a duplicate of its
// folder handle, which the caller closes; the original stays the table's.
func (t *CapTable) OpenDir(h Handle, agent string, need Rights) (Cap, *os.File, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	c, err := t.lookup(h, agent)
	if err != nil {
		return c, nil, err
	}
	if c.Rights&need != need {
		return c, nil, capRefused(ErrNoRight, h.Short())
	}
	d := t.caps[h].dir
	if d == nil {
		return c, nil, capRefused(ErrNoRight, h.Short())
	}
	fd, err := unix.FcntlInt(d.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return c, nil, err
	}
	return c, os.NewFile(uintptr(fd), c.Route), nil
}

// Agent returns the agent a start belongs to.
func (t *CapTable) Agent(start uint64) (string, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	a, ok := t.agents[start]
	return a, ok
}

// Revoke removes every capability of start and closes their handles.
func (t *CapTable) Revoke(start uint64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := t.starts[start]
	for _, h := range hs {
		if c := t.caps[h]; c != nil && c.dir != nil {
			c.dir.Close()
		}
		delete(t.caps, h)
		t.revoked[h] = struct{}{}
		t.order = append(t.order, h)
	}
	for len(t.order) > maxRevoked {
		delete(t.revoked, t.order[0])
		t.order = t.order[1:]
	}
	delete(t.starts, start)
	delete(t.agents, start)
	return len(hs)
}

// Len is how many capabilities the table holds.
func (t *CapTable) Len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.caps)
}

// Starts lists each running start: its agent and how many capabilities.
func (t *CapTable) Starts() map[uint64][2]any {
	t.mu.RLock()
	defer t.mu.RUnlock()
	m := make(map[uint64][2]any, len(t.agents))
	for s, a := range t.agents {
		m[s] = [2]any{a, len(t.starts[s])}
	}
	return m
}

// RevokeAll revokes every start (at the kernel's stop).
func (t *CapTable) RevokeAll() {
	t.mu.RLock()
	var ss []uint64
	for s := range t.agents {
		ss = append(ss, s)
	}
	t.mu.RUnlock()
	for _, s := range ss {
		t.Revoke(s)
	}
}

// StartDir is one folder capability of a start, with a duplicate of its
// handle for the caller to hand on and close.
type StartDir struct {
	Handle Handle
	Rights Rights
	Dir    *os.File
}

// StartDirs returns duplicates of every folder handle of start.
func (t *CapTable) StartDirs(start uint64) ([]StartDir, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []StartDir
	for _, h := range t.starts[start] {
		c := t.caps[h]
		if c == nil || c.dir == nil || c.Rights&(RightRead|RightWrite) == 0 {
			continue // a bind-only folder is no fsbroker's
		}
		fd, err := unix.FcntlInt(c.dir.Fd(), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			for _, d := range out {
				d.Dir.Close()
			}
			return nil, err
		}
		out = append(out, StartDir{Handle: h, Rights: c.Rights, Dir: os.NewFile(uintptr(fd), c.Route)})
	}
	return out, nil
}
