package toolbridge

import (
	"bufio"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/connpass"
)

// proxyChannel serves r's bridge on a channel of its own and returns the
// proxy's end, as lnk sandbox run hands it to the proxy.
func (r *rig) proxyChannel() *net.UnixConn {
	recv, send, err := connpass.ReceivingPair()
	if err != nil {
		r.t.Fatal(err)
	}
	go (&Server{Bridge: r.bridge}).ServePassed(recv)
	ch, err := connpass.Channel(send)
	send.Close()
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { ch.Close() })
	return ch
}

// clientConn is a client's connection as the proxy accepts it: over TCP
// on loopback (the sandbox's 127.0.0.1:3128), or a unix socket. It
// returns the client's end and the proxy's.
func clientConn(t *testing.T, network string) (client, accepted net.Conn) {
	t.Helper()
	if network == "unix" {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		cf, sf := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "accepted")
		defer cf.Close()
		defer sf.Close()
		client, _ = net.FileConn(cf)
		accepted, _ = net.FileConn(sf)
		return client, accepted
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if client, err = net.Dial("tcp", ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if accepted, err = ln.Accept(); err != nil {
		t.Fatal(err)
	}
	return client, accepted
}

// A client that closes its connection before its session has started
// gets none, and holds no place. Over TCP, where a close shows as a
// half-close does (POLLRDHUP alone), a half-close counts as closing it
// (the spec's rule for a proxy reached over TCP, as Link's is from the
// sandbox); on a unix socket a half-close is not a close, and is
// answered.
func TestClientClosingBeforeItsSessionStartedOverTCPAndUnix(t *testing.T) {
	for _, tc := range []struct {
		network  string
		half     bool
		answered bool
	}{
		{"tcp", false, false},
		{"tcp", true, false},
		{"unix", false, false},
		{"unix", true, true},
	} {
		name := tc.network + " close"
		if tc.half {
			name = tc.network + " half-close"
		}
		t.Run(name, func(t *testing.T) {
			r := newRig(t, askNone, Settings{Sessions: 1, StartWait: 20 * time.Second}, "LNK_TEST_START_DELAY=500ms")
			ch := r.proxyChannel()
			client, accepted := clientConn(t, tc.network)
			defer client.Close()
			req, _ := http.NewRequest("POST", "http://127.0.0.1/mcp/test", strings.NewReader(initBody))
			req.Write(client)
			// The proxy reads the request's first bytes, then passes the
			// connection with them.
			head := make([]byte, 64)
			n, err := accepted.Read(head)
			if err != nil {
				t.Fatal(err)
			}
			if err := connpass.Send(ch, accepted, head[:n]); err != nil {
				t.Fatal(err)
			}
			accepted.Close()
			if tc.half {
				client.(interface{ CloseWrite() error }).CloseWrite()
			} else {
				client.Close()
			}
			if tc.answered {
				client.SetReadDeadline(time.Now().Add(10 * time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(client), req)
				if err != nil || resp.StatusCode != 200 || resp.Header.Get(SessionHeader) == "" {
					t.Fatalf("a half-closed client on a unix socket: %v %v", resp, err)
				}
				return
			}
			abandoned := func() bool {
				for _, e := range r.logged() {
					if strings.HasPrefix(e.Outcome, "abandoned") {
						return true
					}
				}
				return false
			}
			for deadline := time.Now().Add(5 * time.Second); !abandoned(); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the start was not abandoned (%d sessions): %+v", r.bridge.Sessions(), r.logged())
				}
			}
			if n := r.bridge.Sessions(); n != 0 {
				t.Fatalf("an abandoned start kept %d sessions", n)
			}
			r.initSession() // its one place is free
		})
	}
}
