package netbroker

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/connpass"
)

// relayPass does what the sandbox's relay does with a connection it
// accepted: passes it on a connection of its own to the proxy's socket.
func relayPass(t *testing.T, tp *testProxy, c net.Conn) {
	t.Helper()
	u, err := net.Dial("unix", tp.socket)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if err := connpass.SendOnStream(u.(*net.UnixConn), c); err != nil {
		t.Fatal(err)
	}
}

// A TCP connection the relay accepted on loopback and passed is served
// as the proxy's own client: a CONNECT through it reaches a granted port,
// its bytes copied both ways, and the relay holds nothing of it after.
func TestPassedTCPConnectionIsServed(t *testing.T) {
	echo := echoServer(t, "")
	port := uint16(echo.Addr().(*net.TCPAddr).Port)
	tp := startProxy(t, caps.Compiled{LocalhostPorts: []uint16{port}}, nil)
	relay, err := net.Listen("tcp", "127.0.0.1:0") // the relay's port
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	client, err := net.Dial("tcp", relay.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	client.SetDeadline(time.Now().Add(30 * time.Second))
	accepted, err := relay.Accept()
	if err != nil {
		t.Fatal(err)
	}
	relayPass(t, tp, accepted)
	accepted.Close() // the relay's copy
	fmt.Fprintf(client, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port)
	br := bufio.NewReader(client)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT on a passed connection: %v %v", resp, err)
	}
	io.WriteString(client, "ping\n")
	if line, err := br.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("through the tunnel: %q %v", line, err)
	}
}

// What is passed must be a TCP connection to loopback, the marker alone
// beside it; anything else on the proxy's socket with an fd, or the
// marker with none, is refused 400 and logged, and the fd closed: its
// other end sees every copy gone.
func TestPassedConnectionsThatAreNotTheRelaysAreRefused(t *testing.T) {
	tp := startProxy(t, caps.Compiled{}, nil)
	// Each fd comes with a check that every copy of it is closed, made
	// from the end the test keeps.
	stream := func(t *testing.T) (int, func() bool) {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fds[1]) })
		return fds[0], func() bool {
			unix.SetNonblock(fds[1], true)
			n, err := unix.Read(fds[1], make([]byte, 1))
			return n == 0 && err == nil // EOF: no copy of the other end is left
		}
	}
	for _, tc := range []struct {
		name, data, reason string
		fd                 func(t *testing.T) (int, func() bool) // -1: none
	}{
		{"a unix connection", "\x00", "not a TCP connection to the relay's loopback port", stream},
		{"an fd with a request", "GET http://x/ HTTP/1.1\r\n\r\n", "bytes that are not the marker", stream},
		{"the marker alone", "\x00", "with no connection", func(*testing.T) (int, func() bool) { return -1, nil }},
		{"a pipe", "\x00", "not a socket", func(t *testing.T) (int, func() bool) {
			var p [2]int
			unix.Pipe2(p[:], unix.O_CLOEXEC)
			t.Cleanup(func() { unix.Close(p[1]) })
			return p[0], func() bool {
				unix.SetNonblock(p[1], true)
				_, err := unix.Write(p[1], []byte("x"))
				return err == unix.EPIPE // no read end is left
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := tp.dial(t)
			var oob []byte
			fd, closedEverywhere := tc.fd(t)
			if fd >= 0 {
				oob = unix.UnixRights(fd)
			}
			if _, _, err := u.(*net.UnixConn).WriteMsgUnix([]byte(tc.data), oob, nil); err != nil {
				t.Fatal(err)
			}
			if fd >= 0 {
				unix.Close(fd) // the sender's copy
			}
			resp, err := http.ReadResponse(bufio.NewReader(u), nil)
			if err != nil || resp.StatusCode != 400 {
				t.Fatalf("%s: %v %v, want 400", tc.name, resp, err)
			}
			ev := tp.log.waitFor(t, func(e Event) bool { return strings.Contains(e.Reason, tc.reason) })
			if ev.Decision != "refuse" {
				t.Errorf("logged as %q: %+v", ev.Decision, ev)
			}
			if closedEverywhere != nil && !closedEverywhere() {
				t.Error("the proxy kept the fd that came with a refused message")
			}
		})
	}
}
