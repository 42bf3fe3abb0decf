package sandbox_test

import (
	"net"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/sandbox"
)

// testProxy answers every request on a unix socket with the request line
// it got, as a real proxy's socket would be bound in.
func testProxy(t *testing.T, dir string) string {
	t.Helper()
	sock := filepath.Join(dir, "proxy.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	serveFirstLines(t, l, func(line string) string { return "HTTP/1.0 200 OK\r\n\r\nproxy-saw: " + line + "\n" })
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
	if !strings.Contains(out, "proxy-saw: GET http://example.test/ HTTP/1.0") {
		t.Fatalf("the request did not reach the proxy: %q %s", out, errs)
	}
	if strings.Contains(out, "OTHER-PORT-OPEN") {
		t.Fatal("a loopback port other than the relay's was reachable")
	}
	if !strings.Contains(out, "proxy=http://127.0.0.1:3128 all=http://127.0.0.1:3128") {
		t.Fatalf("proxy variables: %q", out)
	}
}
