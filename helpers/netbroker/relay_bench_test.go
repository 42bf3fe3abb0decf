package netbroker

import (
	"net"
	"testing"

	"lnk.dev/lnk/internal/connpass"
)

// benchRelay does what the sandbox's first stage does (lnk-init): it
// listens on loopback and hands the listener to the proxy on its relay
// channel. It returns the listener's address, where the proxy itself
// accepts.
func benchRelay(b *testing.B, px *benchProc) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := connpass.PassListener(int(px.relay.Fd()), int(f.Fd())); err != nil {
		b.Fatal(err)
	}
	return ln.Addr().String()
}

// via is a way a client reaches the proxy in the tunnel benchmarks: on
// its socket itself, or as the sandbox does, a TCP connection to the
// listener its first stage handed the proxy.
type via struct {
	name string
	// dial returns a function that opens a CONNECT tunnel to port
	// through the proxy px.
	dial func(b *testing.B, px *benchProc, port uint16) func() (net.Conn, error)
}

var vias = []via{
	{"socket", func(b *testing.B, px *benchProc, port uint16) func() (net.Conn, error) {
		return func() (net.Conn, error) { return viaProxy(px.sock, port) }
	}},
	{"relay", func(b *testing.B, px *benchProc, port uint16) func() (net.Conn, error) {
		relay := benchRelay(b, px)
		return func() (net.Conn, error) { return connectVia("tcp", relay, port) }
	}},
}
