package sandbox_test

import (
	"bufio"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/kernel/sandbox"
)

// testRelay stands where the proxy stands: it takes the listener the
// sandbox's first stage hands on the relay channel (internal/connpass)
// and answers every request on it with the request line it got. It
// returns the channel's sending end, for Options.RelayChannel.
func testRelay(t *testing.T) (*os.File, *relayServer) {
	t.Helper()
	ch, send, err := connpass.ReceivingPair()
	if err != nil {
		t.Fatal(err)
	}
	rs := &relayServer{done: make(chan struct{})}
	go rs.serve(ch)
	t.Cleanup(func() {
		ch.Close()
		rs.mu.Lock()
		if rs.ln != nil {
			rs.ln.Close()
		}
		rs.mu.Unlock()
		<-rs.done
		for _, f := range rs.held {
			f.Close()
		}
	})
	return send, rs
}

type relayServer struct {
	mu       sync.Mutex
	ln       net.Listener
	held     []*os.File // what came with the listener: the lifeline
	accepted atomic.Int32
	done     chan struct{}
}

func (rs *relayServer) serve(ch *net.UnixConn) {
	defer close(rs.done)
	ln, held, err := connpass.NewReceiver(ch).ReceiveListener()
	if err != nil {
		return
	}
	rs.mu.Lock()
	rs.ln, rs.held = ln, held
	rs.mu.Unlock()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		rs.accepted.Add(1)
		go func() {
			defer c.Close()
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Write([]byte("HTTP/1.0 200 OK\r\n\r\nproxy-saw: " + strings.TrimSpace(line) + "\n"))
		}()
	}
}

// The sandbox reaches what stands for its proxy on the relay's port, by
// the listener its first stage handed (with lnk's lifeline, to be held
// outside), and no other loopback port.
func TestRelayReachesProxyAndNothingElse(t *testing.T) {
	w := newWorld(t)
	ch, proxy := testRelay(t)
	c := compile(t, w, caps.Grants{Commands: []string{"bash"}})
	script := `exec 3<>/dev/tcp/127.0.0.1/${HTTP_PROXY##*:}
printf 'GET http://example.test/ HTTP/1.0\r\n\r\n' >&3
while read -r l <&3; do echo "$l"; done
(exec 4<>/dev/tcp/127.0.0.1/22) 2>/dev/null && echo OTHER-PORT-OPEN
echo "proxy=$HTTPS_PROXY all=$ALL_PROXY"`
	code, out, errs := run(t, c, sandbox.Options{RelayChannel: ch}, "bash", "-c", script)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	if !strings.Contains(out, "proxy-saw: GET http://example.test/ HTTP/1.0") {
		t.Fatalf("the request did not reach the proxy: %q %s", out, errs)
	}
	if n := proxy.accepted.Load(); n != 1 {
		t.Errorf("the proxy accepted %d connections on the handed listener, want the one", n)
	}
	proxy.mu.Lock()
	held := len(proxy.held)
	proxy.mu.Unlock()
	if held != 1 {
		t.Errorf("%d fds came with the listener, want lnk's lifeline", held)
	}
	if strings.Contains(out, "OTHER-PORT-OPEN") {
		t.Fatal("a loopback port other than the relay's was reachable")
	}
	if !strings.Contains(out, "proxy=http://127.0.0.1:3128 all=http://127.0.0.1:3128") {
		t.Fatalf("proxy variables: %q", out)
	}
}

// No process of Link's runs inside a sandbox with a relay: the proxy
// accepts on the handed listener from outside, so the command's pid
// namespace holds bubblewrap's PID 1, the command, and nothing else —
// nothing there for it to ptrace or signal.
func TestNoRelayProcessInside(t *testing.T) {
	w := newWorld(t)
	ch, _ := testRelay(t)
	c := compile(t, w, caps.Grants{Commands: []string{"bash"}})
	script := `exec 3<>/dev/tcp/127.0.0.1/${HTTP_PROXY##*:}
for p in /proc/[0-9]*; do read -r -d '' a < $p/cmdline; echo "proc ${p#/proc/} $a"; done`
	code, out, errs := run(t, c, sandbox.Options{RelayChannel: ch}, "bash", "-c", script)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	var procs []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, "proc ") {
			procs = append(procs, strings.TrimPrefix(l, "proc "))
		}
	}
	if len(procs) != 2 || !strings.HasPrefix(procs[0], "1 ") || !strings.Contains(procs[1], "bash") {
		t.Fatalf("processes in the sandbox: %q, want bubblewrap's PID 1 and the command alone (%s)", procs, errs)
	}
}
