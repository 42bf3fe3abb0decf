package sandbox_test

import (
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/kernel/sandbox"
)

// testProxy answers every request on a unix socket with the request line
// it got, as a real proxy's socket would be bound in; its listener counts
// the connections the relay passed (internal/connpass) and those sent on
// the socket itself.
func testProxy(t *testing.T, dir string) (string, *passingListener) {
	t.Helper()
	sock := filepath.Join(dir, "proxy.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	pl := &passingListener{Listener: l}
	serveFirstLines(t, pl, func(line string) string { return "HTTP/1.0 200 OK\r\n\r\nproxy-saw: " + line + "\n" })
	return sock, pl
}

// passingListener accepts on a proxy's socket as the proxy does: a
// connection passed on it is taken in its place.
type passingListener struct {
	net.Listener
	passed, sent atomic.Int32
}

func (l *passingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 4096)
	n, passed, err := connpass.FirstRead(c.(*net.UnixConn), buf)
	switch {
	case err != nil:
		return c, nil // answered as it is: its first line never comes
	case passed != nil:
		c.Close()
		l.passed.Add(1)
		return passed, nil
	}
	l.sent.Add(1)
	return connpass.WithHead(c, buf[:n]), nil
}

func TestRelayReachesProxyAndNothingElse(t *testing.T) {
	w := newWorld(t)
	sock, proxy := testProxy(t, t.TempDir())
	c := compile(t, w, caps.Grants{Commands: []string{"bash"}})
	script := `exec 3<>/dev/tcp/127.0.0.1/${HTTP_PROXY##*:}
printf 'GET http://example.test/ HTTP/1.0\r\n\r\n' >&3
cat <&3
(exec 4<>/dev/tcp/127.0.0.1/22) 2>/dev/null && echo OTHER-PORT-OPEN
echo "proxy=$HTTPS_PROXY all=$ALL_PROXY"`
	code, out, errs := run(t, c, sandbox.Options{ProxySocket: sock}, "bash", "-c", script)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	if !strings.Contains(out, "proxy-saw: GET http://example.test/ HTTP/1.0") {
		t.Fatalf("the request did not reach the proxy: %q %s", out, errs)
	}
	if p, s := proxy.passed.Load(), proxy.sent.Load(); p != 1 || s != 0 {
		t.Errorf("the relay passed %d connections and sent %d itself; want the one passed (it carries no byte)", p, s)
	}
	if strings.Contains(out, "OTHER-PORT-OPEN") {
		t.Fatal("a loopback port other than the relay's was reachable")
	}
	if !strings.Contains(out, "proxy=http://127.0.0.1:3128 all=http://127.0.0.1:3128") {
		t.Fatalf("proxy variables: %q", out)
	}
}
