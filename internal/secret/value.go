package secret

import (
	"crypto/subtle"
	"fmt"
	"log/slog"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// Redacted is what a Value prints as, wherever it is printed.
const Redacted = "[secret]"

// Value is a secret held in locked, undumpable memory. The zero Value and
// a nil *Value are empty.
type Value struct {
	mu  sync.Mutex
	mem *pages // nil once destroyed
	n   int
}

// pages is the mapping behind a Value; it is kept apart from the Value so
// the runtime cleanup can zero it without holding the Value alive.
type pages struct {
	buf    []byte
	locked bool
}

func (p *pages) wipe() {
	if p.buf == nil {
		return
	}
	clear(p.buf)
	if p.locked {
		unix.Munlock(p.buf)
	}
	unix.Munmap(p.buf)
	p.buf = nil
}

// New copies b into a fresh Value and zeroes b, so the only copy left is
// the protected one.
func New(b []byte) (*Value, error) {
	size := len(b)
	page := unix.Getpagesize()
	mapped := (size + page - 1) / page * page
	if mapped == 0 {
		mapped = page
	}
	buf, err := unix.Mmap(-1, 0, mapped, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		clear(b)
		return nil, fmt.Errorf("secret: mapping memory for a secret: %w", err)
	}
	p := &pages{buf: buf}
	// DONTDUMP keeps it out of core dumps; WIPEONFORK out of a forked child.
	// Both are best effort on kernels that lack them; mlock fails past
	// RLIMIT_MEMLOCK, which Locked reports.
	unix.Madvise(buf, unix.MADV_DONTDUMP)
	unix.Madvise(buf, unix.MADV_WIPEONFORK)
	p.locked = unix.Mlock(buf) == nil
	copy(buf, b)
	clear(b)
	v := &Value{mem: p, n: size}
	runtime.AddCleanup(v, func(p *pages) { p.wipe() }, p)
	return v, nil
}

// FromString is New for a value that arrived as a string (a parsed file).
// The string's own memory can't be zeroed; callers that can keep bytes
// should use New.
func FromString(s string) (*Value, error) { return New([]byte(s)) }

// Bytes returns the secret's bytes. The slice aliases the locked pages:
// don't keep it past Destroy, append to it or let it escape, and keep v
// reachable while using it (runtime.KeepAlive(v) after the last use): a
// Value the collector finds unreachable is zeroed and unmapped.
func (v *Value) Bytes() []byte {
	if v == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mem == nil {
		return nil
	}
	return v.mem.buf[:v.n:v.n]
}

// Len is the secret's length in bytes.
func (v *Value) Len() int {
	if v == nil {
		return 0
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mem == nil {
		return 0
	}
	return v.n
}

// Locked reports whether the secret's pages are locked in RAM.
func (v *Value) Locked() bool {
	if v == nil {
		return false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.mem != nil && v.mem.locked
}

// Equal compares the secret with b in constant time (for equal lengths).
func (v *Value) Equal(b []byte) bool {
	eq := subtle.ConstantTimeCompare(v.Bytes(), b) == 1 && v.Len() == len(b)
	runtime.KeepAlive(v)
	return eq
}

// Destroy zeroes and unmaps the secret now. It is safe to call twice.
func (v *Value) Destroy() {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.mem != nil {
		v.mem.wipe()
		v.mem = nil
		v.n = 0
	}
}

// String never gives the value.
func (v *Value) String() string { return Redacted }

// GoString never gives the value (%#v).
func (v *Value) GoString() string { return Redacted }

// Format prints Redacted for every verb and flag.
func (v *Value) Format(f fmt.State, verb rune) { f.Write([]byte(Redacted)) }

// MarshalJSON never gives the value.
func (v *Value) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// MarshalText never gives the value.
func (v *Value) MarshalText() ([]byte, error) { return []byte(Redacted), nil }

// LogValue keeps the value out of slog lines.
func (v *Value) LogValue() slog.Value { return slog.StringValue(Redacted) }
