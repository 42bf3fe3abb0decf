package webhook

import (
	"net"
	"sync"
)

// limitListener accepts at most n connections open at once: Accept
// waits for one to close before it takes another, so connections past
// the cap wait in the kernel's backlog, holding nothing of the
// listener's. Each connection's own time is bounded by the server's
// header and body timeouts, so a slot is always freed.
type limitListener struct {
	net.Listener
	slots chan struct{}
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &slotConn{Conn: c, free: sync.OnceFunc(func() { <-l.slots })}, nil
}

// slotConn frees its slot once, at its first Close.
type slotConn struct {
	net.Conn
	free func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.free()
	return err
}
