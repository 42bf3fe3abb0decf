package sandbox_test

import (
	"bufio"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/kernel/sandbox"
)

// testProxy answers every request on a unix socket with the request line
// it got, as a real proxy's socket would be bound in, and says whether
// the relay passed it the sandbox's TCP connection (internal/connpass)
// or sent the bytes itself.
func testProxy(t *testing.T, dir string) string {
	t.Helper()
	sock := filepath.Join(dir, "proxy.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				n, passed, err := connpass.FirstRead(c.(*net.UnixConn), buf)
				if err != nil {
					return
				}
				var conn net.Conn = connpass.WithHead(c, buf[:n])
				how := "sent"
				if passed != nil {
					defer passed.Close()
					conn, how = passed, "passed a "+passed.LocalAddr().Network()+" connection"
				}
				line, _ := bufio.NewReader(conn).ReadString('\n')
				conn.Write([]byte("HTTP/1.0 200 OK\r\n\r\nproxy-saw (" + how + "): " + strings.TrimSpace(line) + "\n"))
			}()
		}
	}()
	return sock
}

func TestRelayReachesProxyAndNothingElse(t *testing.T) {
	w := newWorld(t)
	sock := testProxy(t, t.TempDir())
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
	if !strings.Contains(out, "proxy-saw (passed a tcp connection): GET http://example.test/ HTTP/1.0") {
		t.Fatalf("the request did not reach the proxy: %q %s", out, errs)
	}
	if strings.Contains(out, "OTHER-PORT-OPEN") {
		t.Fatal("a loopback port other than the relay's was reachable")
	}
	if !strings.Contains(out, "proxy=http://127.0.0.1:3128 all=http://127.0.0.1:3128") {
		t.Fatalf("proxy variables: %q", out)
	}
}
