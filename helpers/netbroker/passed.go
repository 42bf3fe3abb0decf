package netbroker

import (
	"errors"
	"net"
	"time"

	"lnk.dev/lnk/internal/connpass"
)

// take is the connection to serve for c, accepted on the proxy's socket:
// c itself, its first bytes replayed, or the connection the sandbox's
// relay passed on it (internal/connpass: the marker byte with the fd of
// the TCP connection it accepted), which is then served in c's place and
// c closed. A passed connection must be a TCP connection to loopback (the
// relay's port in the sandbox's own network): anything else is refused
// and logged. Nothing is served (nil) after a refusal or a client gone.
func (p *Proxy) take(c net.Conn) net.Conn {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return c
	}
	uc.SetReadDeadline(time.Now().Add(p.cfg.HeaderTimeout))
	buf := make([]byte, 4096)
	n, passed, err := connpass.FirstRead(uc, buf)
	var ref *connpass.Refusal
	switch {
	case errors.As(err, &ref):
		p.refuse(c, Event{Kind: "connect"}, malformed("a passed connection: "+ref.Reason))
		return nil
	case err != nil:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			p.refuse(c, Event{Kind: "http"}, &Refusal{Status: 408, Kind: KindMalformed, Reason: "no request within " + p.cfg.HeaderTimeout.String()})
		}
		return nil // closed before a byte: nothing to log
	case passed == nil:
		return connpass.WithHead(c, buf[:n])
	}
	tc, ok := passed.Conn.(*net.TCPConn)
	if ok {
		local, _ := tc.LocalAddr().(*net.TCPAddr)
		ok = local != nil && local.IP.IsLoopback()
	}
	if !ok {
		passed.Close()
		p.refuse(c, Event{Kind: "connect"}, malformed("a passed connection that is not a TCP connection to the relay's loopback port"))
		return nil
	}
	// The bytes were the marker's alone; the client's are still to come,
	// within the header timeout serveConn sets.
	c.Close()
	return tc
}
