package tools

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memorySession is memory's one session, kept for the turns after and
// shared by every conversation: ended once unused for MemoryIdle,
// MemoryMax after it started, or at once after a call failed other than
// with the tool's own error.
type memorySession struct {
	set  *Set
	tool *toolState

	mu      sync.Mutex
	cs      *mcp.ClientSession
	started time.Time
	used    time.Time
	timer   *time.Timer
	gen     int // which session the timer is for
}

// session answers the kept session, opening one when there is none or
// the one there is past its time.
func (m *memorySession) session(ctx context.Context) (*mcp.ClientSession, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.set.now()
	if m.cs != nil && (now.Sub(m.used) >= m.set.set.MemoryIdle || now.Sub(m.started) >= m.set.set.MemoryMax) {
		m.closeLocked("its time was up")
	}
	if m.cs == nil {
		cs, err := m.set.connect(ctx, m.tool.url)
		if err != nil {
			return nil, err
		}
		m.cs, m.started, m.gen = cs, now, m.gen+1
		m.set.logf("tools: memory: session started")
	}
	m.used = now
	m.arm()
	return m.cs, nil
}

// arm sets the timer that ends the session when it next falls due: idle
// or at its hour. Called with mu held.
func (m *memorySession) arm() {
	due := min(m.set.set.MemoryIdle, m.started.Add(m.set.set.MemoryMax).Sub(m.used))
	gen := m.gen
	if m.timer != nil {
		m.timer.Stop()
	}
	m.timer = time.AfterFunc(due, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.gen != gen || m.cs == nil {
			return
		}
		now := m.set.now()
		if now.Sub(m.used) >= m.set.set.MemoryIdle {
			m.closeLocked("no turn used it for " + m.set.set.MemoryIdle.String())
		} else if now.Sub(m.started) >= m.set.set.MemoryMax {
			m.closeLocked(m.set.set.MemoryMax.String() + " after it started")
		} else {
			m.arm()
		}
	})
}

// failed ends the session at once after a call through it failed other
// than with the tool's own error.
func (m *memorySession) failed(cs *mcp.ClientSession, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cs == cs {
		m.closeLocked("a call failed: " + why)
	}
}

// end ends the session, whatever its state.
func (m *memorySession) end(why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cs != nil {
		m.closeLocked(why)
	}
}

// open reports whether a session is kept now (for tests and logs).
func (m *memorySession) open() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cs != nil
}

// closeLocked ends the session; mu is held.
func (m *memorySession) closeLocked(why string) {
	if m.timer != nil {
		m.timer.Stop()
		m.timer = nil
	}
	m.cs.Close()
	m.cs = nil
	m.gen++
	m.set.logf("tools: memory: session ended: %s", why)
}
