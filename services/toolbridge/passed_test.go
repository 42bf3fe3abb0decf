package toolbridge

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// passRig is a bridge serving a channel the test sends on as the proxy.
type passRig struct {
	ch *net.UnixConn

	mu  sync.Mutex
	log []Event
}

func newPassRig(t *testing.T) *passRig {
	home := testenv.Home(t)
	rig := &passRig{}
	b := &Bridge{Defs: tooldef.Store{Home: home}, Log: func(e Event) { rig.mu.Lock(); rig.log = append(rig.log, e); rig.mu.Unlock() }}
	run, err := Start(home, SandboxName("pass"), b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(run.Close)
	f, err := run.ProxyChannel()
	if err != nil {
		t.Fatal(err)
	}
	rig.ch, err = connpass.Channel(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rig.ch.Close() })
	return rig
}

// pass passes a new connection with head, as the proxy does, and returns
// the client's end.
func (rig *passRig) pass(t *testing.T, head string) net.Conn {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	cf, sf := os.NewFile(uintptr(fds[0]), "client"), os.NewFile(uintptr(fds[1]), "accepted")
	defer cf.Close()
	defer sf.Close()
	c, _ := net.FileConn(cf)
	s, _ := net.FileConn(sf)
	defer s.Close()
	t.Cleanup(func() { c.Close() })
	if err := connpass.Send(rig.ch, s, []byte(head)); err != nil {
		t.Fatal(err)
	}
	return c
}

func (rig *passRig) logged(t *testing.T, want string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		rig.mu.Lock()
		for _, e := range rig.log {
			if strings.Contains(e.Outcome, want) {
				rig.mu.Unlock()
				return
			}
		}
		rig.mu.Unlock()
	}
	t.Fatalf("no log line says %q: %+v", want, rig.log)
}

func status(t *testing.T, c net.Conn) int {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// The bridge answers a passed connection on it, the proxy's bytes first;
// what is not a connection is refused and logged, and the next taken.
func TestPassedConnectionIsAnsweredAndWhatIsNotIsRefused(t *testing.T) {
	rig := newPassRig(t)
	c := rig.pass(t, "POST /_link/s/wrong/mcp/x HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	c.Write([]byte("Content-Length: 0\r\n\r\n"))
	if got := status(t, c); got != http.StatusNotFound {
		t.Fatalf("a request on a wrong route: %d, want 404", got)
	}
	var p [2]int
	unix.Pipe2(p[:], unix.O_CLOEXEC)
	rig.ch.WriteMsgUnix([]byte("GET / HTTP/1.1\r\n\r\n"), unix.UnixRights(p[0]), nil)
	unix.Close(p[0])
	unix.Close(p[1])
	rig.logged(t, "refused: from the proxy, the fd is not a socket")
	c = rig.pass(t, "DELETE /_link/s/wrong/mcp/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if got := status(t, c); got != http.StatusNotFound {
		t.Fatalf("after a refusal: %d, want 404 (the channel still serves)", got)
	}
}

// The bridge holds at most MaxPassed passed connections at once: one
// more is answered 429 and logged; one that ends makes room again.
func TestPassedConnectionsAreCapped(t *testing.T) {
	rig := newPassRig(t)
	var open []net.Conn
	for range MaxPassed {
		open = append(open, rig.pass(t, "POST /_link/s/x/mcp/y HTTP/1.1\r\n")) // its headers never end
	}
	over := rig.pass(t, "")
	if got := status(t, over); got != http.StatusTooManyRequests {
		t.Fatalf("connection %d: %d, want 429", MaxPassed+1, got)
	}
	rig.logged(t, fmt.Sprintf("refused: over %d tool calls open at once", MaxPassed))
	open[0].Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		c := rig.pass(t, "DELETE /mcp/y HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		got := status(t, c)
		if got != http.StatusTooManyRequests {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a slot was not given back when its connection ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
