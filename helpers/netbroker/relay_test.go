package netbroker

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/testenv"
)

// relayProxy starts a proxy with grants c and a relay channel, and
// returns its log and the channel's sending end (the sandbox's
// first stage's), as raw fd.
func relayProxy(t *testing.T, c Grants) (*eventLog, int) {
	t.Helper()
	ch, send, err := connpass.ReceivingPair()
	if err != nil {
		t.Fatal(err)
	}
	log := &eventLog{}
	r, err := Start(&c, Options{Home: testenv.Home(t), Relay: ch,
		Config: Config{Resolver: mapResolver{}, Log: log.add}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); send.Close() })
	return log, int(send.Fd())
}

// The sandbox's listener, handed on the relay channel, is served as the
// proxy's socket is: a CONNECT on a connection to it reaches a granted
// port, its bytes copied both ways; and the lifeline that came with it
// is held (its write end sees a reader) for as long as the proxy runs.
func TestRelayListenerIsServed(t *testing.T) {
	echo := echoServer(t, "")
	port := uint16(echo.Addr().(*net.TCPAddr).Port)
	_, ch := relayProxy(t, Grants{LocalhostPorts: []uint16{port}})
	ln, addr := testenv.LoopbackListener(t)
	var life [2]int
	if err := unix.Pipe2(life[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(life[1])
	if err := connpass.PassListener(ch, ln, life[0]); err != nil {
		t.Fatal(err)
	}
	unix.Close(ln) // the first stage's copies
	unix.Close(life[0])
	client, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	client.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(client, "CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port)
	br := bufio.NewReader(client)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT through the sandbox's listener: %v %v", resp, err)
	}
	io.WriteString(client, "ping\n")
	if line, err := br.ReadString('\n'); err != nil || line != "ping\n" {
		t.Fatalf("through the tunnel: %q %v", line, err)
	}
	if _, err := unix.Write(life[1], []byte{1}); err != nil {
		t.Fatalf("the lifeline is not held: %v", err)
	}
}

// What comes on the relay channel must be a TCP listener on loopback:
// anything else is refused and logged, and never served.
func TestRelayChannelRefusesWhatIsNotTheSandboxListener(t *testing.T) {
	log, ch := relayProxy(t, Grants{})
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Sendmsg(ch, []byte(connpass.ListenerTag), unix.UnixRights(int(f.Fd())), nil, 0); err != nil {
		t.Fatal(err)
	}
	ev := log.waitFor(t, func(e Event) bool { return e.Kind == "relay" })
	if ev.Decision != "refuse" || !strings.Contains(ev.Reason, "not a socket") {
		t.Fatalf("logged %+v, want a refusal saying the fd is not a socket", ev)
	}
}
