package kernel

import (
	"context"
	"os"
	"sync"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/proto"
)

// conn is one accepted connection, served by the shared record server
// (internal/wire): the kernel adds the peer it checked and the starts
// the peer made.
type conn struct {
	k    *Kernel
	srv  *wire.Server
	peer audit.Peer
	// pidfd pins the peer process (SO_PEERPIDFD), nil where the OS
	// lacks it; closed with the connection.
	pidfd *os.File

	smu sync.Mutex
	// starts are the starts this connection made (handleStart): only it
	// ends them, and they are revoked when it closes, however the peer
	// went.
	starts map[uint64]bool
	// ended are the starts of this connection's that the kernel ended
	// (end-agent), with why: its End is then told so, not refused.
	ended map[uint64]string
	// gone is closed once the connection is ending: the peer went, broke
	// the protocol, or the kernel drains. A Watch waits on it.
	gone     chan struct{}
	goneOnce sync.Once
}

// newConn takes f, an accepted connection, to serve through the kernel's
// table. The server is made before the connection is listed, so a drain
// that begins at once finds it.
func (k *Kernel) newConn(f *os.File, peer audit.Peer, pidfd *os.File) (*conn, error) {
	srv, err := wire.NewServer(f, k.routes, k.opts.Logf)
	if err != nil {
		return nil, err
	}
	c := &conn{k: k, srv: srv, peer: peer, pidfd: pidfd, starts: map[uint64]bool{}, gone: make(chan struct{})}
	srv.OneOfMany()
	srv.OnViolation(func(err error) {
		k.refuse(audit.Entry{Peer: &c.peer, Reason: "connection closed: " + err.Error()})
	})
	return c, nil
}

// connKey is the context key under which a handler finds its connection.
type connKey struct{}

// connOf is the connection a request came on.
func connOf(ctx context.Context) *conn { return ctx.Value(connKey{}).(*conn) }

// drain stops the connection in order (see [wire.Server.Drain]): what
// the peer sent before is still read and answered "stopping"; requests
// in flight finish and are answered, until the kernel's drain bound.
func (c *conn) drain() {
	c.leave() // a Watch answers "stopping" now, not at the drain's bound
	c.srv.Drain(wire.Errorf(proto.CodeStopping, "the kernel is stopping"), c.k.drainExpired)
}

// serve reads and dispatches records until the peer goes, breaks the
// protocol, or the kernel drains; then its starts are revoked and the
// socket is closed. The handlers' context ends only with the connection:
// the kernel's own stop is the drain, not a cancellation.
func (c *conn) serve(ctx context.Context) {
	defer func() {
		c.leave()
		c.endStarts()
		if c.pidfd != nil {
			c.pidfd.Close()
		}
	}()
	c.srv.Serve(context.WithValue(context.WithoutCancel(ctx), connKey{}, c))
}

// leave marks the connection as ending (closes gone), once.
func (c *conn) leave() { c.goneOnce.Do(func() { close(c.gone) }) }

// addStart ties start to this connection.
func (c *conn) addStart(start uint64) {
	c.smu.Lock()
	c.starts[start] = true
	c.smu.Unlock()
}

// takeStart unties start from this connection, reporting whether it was
// one of its own.
func (c *conn) takeStart(start uint64) bool {
	c.smu.Lock()
	defer c.smu.Unlock()
	ok := c.starts[start]
	delete(c.starts, start)
	return ok
}

// markEnded unties start from this connection as the kernel ends it,
// remembering why for the connection's own End.
func (c *conn) markEnded(start uint64, why string) {
	c.smu.Lock()
	defer c.smu.Unlock()
	if c.starts[start] {
		delete(c.starts, start)
		if c.ended == nil {
			c.ended = map[uint64]string{}
		}
		c.ended[start] = why
	}
}

// endedWhy is why the kernel ended start, a start of this connection's,
// or "" if it did not; it stays for End.
func (c *conn) endedWhy(start uint64) string {
	c.smu.Lock()
	defer c.smu.Unlock()
	return c.ended[start]
}

// takeEnded returns why the kernel ended start, a start of this
// connection's, once; "" if it did not.
func (c *conn) takeEnded(start uint64) string {
	c.smu.Lock()
	defer c.smu.Unlock()
	why := c.ended[start]
	delete(c.ended, start)
	return why
}

// endStarts revokes every start this connection made and did not end:
// its peer is gone, and no start outlives the process that made it.
func (c *conn) endStarts() {
	c.smu.Lock()
	starts := c.starts
	c.starts = map[uint64]bool{}
	c.smu.Unlock()
	for start := range starts {
		agent, _ := c.k.caps.Agent(start)
		n := c.k.endStart(start)
		c.k.record(audit.Entry{Kind: audit.KindRevoke, Peer: &c.peer, Agent: agent, Start: start, Count: n, Reason: "the connection that made the start closed"})
	}
}
