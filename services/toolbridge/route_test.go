package toolbridge

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
)

// A call through the proxy's route is answered, and its connection then
// ended, however its request arrives: whole in one write, a body larger
// than the proxy reads with its headers (the bridge reads the rest from
// the connection passed to it), a chunked body, headers and body in two
// writes, or with bytes after it.
func TestRouteRelaysEveryShapeOfRequest(t *testing.T) {
	br := newBenchRoute(t, map[string]caps.Tool{"test": {Allow: []string{"echo"}}}, true, Settings{})
	sid := br.session(t)
	call := func(text string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, text)
	}
	head := func(extra string, n int) string {
		h := "POST http://127.0.0.1:3128" + br.route + " HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nContent-Type: application/json\r\n" + SessionHeader + ": " + sid + "\r\n" + extra
		if n >= 0 {
			h += fmt.Sprintf("Content-Length: %d\r\n", n)
		}
		return h + "\r\n"
	}
	small, large := call("x"), call(strings.Repeat("y", 100<<10))
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(small), small)
	for _, tc := range []struct {
		name   string
		writes []string
	}{
		{"whole", []string{head("", len(small)) + small}},
		{"whole, bare LF headers", []string{strings.ReplaceAll(head("", len(small)), "\r\n", "\n") + small}},
		{"larger than the proxy reads at once", []string{head("", len(large)) + large}},
		{"chunked", []string{head("Transfer-Encoding: chunked\r\n", -1) + chunked}},
		{"headers, then the body", []string{head("", len(small)), small}},
		{"bytes after the request", []string{head("", len(small)) + small + "GET / HTTP/1.1\r\n\r\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("unix", br.proxy)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, w := range tc.writes {
				if _, err := io.WriteString(c, w); err != nil {
					t.Fatal(err)
				}
			}
			r := bufio.NewReader(c)
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), `"id":7`) {
				t.Fatalf("%d %s %v", resp.StatusCode, body, err)
			}
			if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
				t.Errorf("after the answer: %q %v, want the connection ended", rest, err)
			}
		})
	}
}
