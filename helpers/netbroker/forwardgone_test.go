package netbroker

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestForwardEndsWhenTheClientGoes: a server that takes a forwarded
// request and never answers held the proxy's slot for that connection
// after its client gave up and closed, without end: enough such
// servers (any page the agent reads may name one) and the sandbox's
// proxy refused every connection 429. The client's close now ends the
// forward and frees its slot: with one slot, the next request is served
// (the positive control, a server that answers).
func TestForwardEndsWhenTheClientGoes(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	asked := make(chan struct{}, 1)
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				bufio.NewReader(c).ReadString('\n')
				asked <- struct{}{}
				io.Copy(io.Discard, c) // never answers, never closes first
			}()
		}
	}()
	answers := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "answered") }))
	t.Cleanup(answers.Close)
	sp, ap := portOf(t, silent), portOf(t, answers.Listener)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{sp, ap}}, func(c *Config) { c.MaxConns = 1 })

	c := tp.dial(t)
	fmt.Fprintf(c, "GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", sp, sp)
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("the silent server was never asked")
	}
	c.Close()

	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, body, _, _ := tp.ask(t, fmt.Sprintf("GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", ap, ap))
		if resp.StatusCode == 200 && body == "answered" {
			return
		}
		if resp.StatusCode != 429 || time.Now().After(deadline) {
			t.Fatalf("after the client of a silent server closed: %s %q", resp.Status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
