package netbroker

import (
	"net"
	"testing"

	"lnk.dev/lnk/internal/connpass"
)

// benchRelay does, in this process, what the sandbox's relay does
// (lnk-init relay): it accepts TCP on loopback and passes each connection
// to the proxy's socket (the marker byte with its fd), carrying no byte
// itself. It returns the relay's address.
func benchRelay(b *testing.B, sock string) string {
	return serveEach(b, func(c net.Conn) {
		u, err := net.Dial("unix", sock)
		if err != nil {
			return
		}
		defer u.Close()
		connpass.SendOnStream(u.(*net.UnixConn), c)
	}).Addr().String()
}

// via is a way a client reaches the proxy in the tunnel benchmarks: on
// its socket itself (the proxy alone), or as the sandbox does, a TCP
// connection to its relay, which passes it to the proxy (the relay's own
// process left out: it carries no byte).
type via struct {
	name string
	// dial returns a function that opens a CONNECT tunnel to port
	// through the proxy at sock.
	dial func(b *testing.B, sock string, port uint16) func() (net.Conn, error)
}

var vias = []via{
	{"socket", func(b *testing.B, sock string, port uint16) func() (net.Conn, error) {
		return func() (net.Conn, error) { return viaProxy(sock, port) }
	}},
	{"relay", func(b *testing.B, sock string, port uint16) func() (net.Conn, error) {
		relay := benchRelay(b, sock)
		return func() (net.Conn, error) { return connectVia("tcp", relay, port) }
	}},
}
