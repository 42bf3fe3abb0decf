package toolbridge

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"lnk.dev/lnk/internal/connpass"
)

// MaxPassed is how many connections passed by the proxy the bridge serves
// at once; one more is answered 429 and closed. The proxy held each of
// them while it relayed (its own cap, 256 a sandbox); now the bridge does.
const MaxPassed = 256

// ServePassed answers the connections the sandbox's proxy passes on ch
// (internal/connpass): each a client's connection, the request's bytes
// the proxy read with it, answered as one accepted on the socket is. A
// message that passes no connection is refused and logged, and the next
// taken. It returns when the proxy closes its end.
func (sv *Server) ServePassed(ch *net.UnixConn) error {
	r := connpass.NewReceiver(ch)
	w := workers{next: make(chan net.Conn)}
	defer close(w.next)
	slots := make(chan struct{}, MaxPassed)
	for {
		c, err := r.Receive()
		var ref *connpass.Refusal
		switch {
		case errors.As(err, &ref):
			sv.Bridge.log("", "", "refused: from the proxy, "+ref.Reason)
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		select {
		case slots <- struct{}{}:
		default:
			sv.Bridge.log("", "", fmt.Sprintf("refused: over %d tool calls open at once", MaxPassed))
			writeReply(c, text(http.StatusTooManyRequests, fmt.Sprintf("refused: this sandbox has %d tool calls open already", MaxPassed)))
			c.Close()
			continue
		}
		pc := &slotConn{Conn: c, release: func() { <-slots }}
		select {
		case w.next <- pc:
		default:
			go sv.work(&w, pc)
		}
	}
}

// slotConn gives its slot back when closed, once.
type slotConn struct {
	*connpass.Conn
	release func()
	closed  bool
}

func (c *slotConn) Close() error {
	if !c.closed {
		c.closed = true
		c.release()
	}
	return c.Conn.Close()
}
