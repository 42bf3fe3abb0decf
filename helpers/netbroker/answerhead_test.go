package netbroker

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
)

// TestForwardBoundsTheAnswersHead: a server a plain http:// request is
// forwarded to that sends a status line and then headers without end
// (one endless line) is cut at MaxAnswerHeader, refused 502 and logged
// once with its reason, rather than held in the proxy's memory until the
// proxy dies (its death ends the whole start). The positive control: an
// answer with a head just under the cap is passed whole.
func TestForwardBoundsTheAnswersHead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var sent atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				n, _ := c.Read(buf)
				if strings.Contains(string(buf[:n]), "GET /fits ") {
					fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX-Big: %s\r\nContent-Length: 2\r\n\r\nok", strings.Repeat("a", MaxAnswerHeader-200))
					return
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Endless: ")
				chunk := []byte(strings.Repeat("a", 64<<10))
				for sent.Load() < 64<<20 {
					if _, err := c.Write(chunk); err != nil {
						return
					}
					sent.Add(int64(len(chunk)))
				}
				c.Read(buf) // held open: the proxy must stop reading on its own
			}()
		}
	}()
	port := portOf(t, ln)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{port}}, nil)
	resp, body, _, _ := tp.ask(t, fmt.Sprintf("GET http://127.0.0.1:%d/endless HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port))
	if resp.StatusCode != 502 || !strings.Contains(body, "head") {
		t.Fatalf("an endless answer head: %s %q", resp.Status, body)
	}
	if n := sent.Load(); n > 16<<20 {
		t.Fatalf("the proxy read %d bytes of an answer's head", n)
	}
	ev := tp.log.waitFor(t, func(e Event) bool { return e.Decision == "refuse" && e.Kind == "http" })
	if ev.Status != 502 || !strings.Contains(ev.Reason, "head") {
		t.Fatalf("the refusal logged: %+v", ev)
	}
	resp, body, _, _ = tp.ask(t, fmt.Sprintf("GET http://127.0.0.1:%d/fits HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port))
	if resp.StatusCode != 200 || body != "ok" || len(resp.Header.Get("X-Big")) != MaxAnswerHeader-200 {
		t.Fatalf("an answer whose head fits: %s %q", resp.Status, body)
	}
}
