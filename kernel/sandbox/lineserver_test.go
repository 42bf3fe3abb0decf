package sandbox_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
)

// serveFirstLines answers each connection to l with answer(its first
// line, trimmed), then closes it, until the test ends: the test servers
// and proxies of this package's network tests.
func serveFirstLines(t *testing.T, l net.Listener, answer func(line string) string) {
	t.Helper()
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				c.Write([]byte(answer(strings.TrimSpace(line))))
			}()
		}
	}()
}

// sawLine is a test server's answer naming the request line it got.
func sawLine(line string) string {
	return "HTTP/1.0 200 OK\r\nContent-Length: 0\r\nX-Server-Saw: " + line + "\r\n\r\n"
}
