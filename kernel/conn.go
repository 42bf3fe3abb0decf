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
}

// newConn takes f, an accepted connection, to serve through the kernel's
// table. The server is made before the connection is listed, so a drain
// that begins at once finds it.
func (k *Kernel) newConn(f *os.File, peer audit.Peer, pidfd *os.File) (*conn, error) {
	srv, err := wire.NewServer(f, k.routes, k.opts.Logf)
	if err != nil {
		return nil, err
	}
	c := &conn{k: k, srv: srv, peer: peer, pidfd: pidfd, starts: map[uint64]bool{}}
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
	c.srv.Drain(wire.Errorf(proto.CodeStopping, "the kernel is stopping"), c.k.drainExpired)
}

// serve reads and dispatches records until the peer goes, breaks the
// protocol, or the kernel drains; then its starts are revoked and the
// socket is closed. The handlers' context ends only with the connection:
// the kernel's own stop is the drain, not a cancellation.
func (c *conn) serve(ctx context.Context) {
	defer func() {
		c.endStarts()
		if c.pidfd != nil {
			c.pidfd.Close()
		}
	}()
	c.srv.Serve(context.WithValue(context.WithoutCancel(ctx), connKey{}, c))
}

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
