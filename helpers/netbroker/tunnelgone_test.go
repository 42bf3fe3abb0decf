package netbroker

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// silentServer accepts on loopback, reads to its client's end, and
// never writes or closes until the test ends; each connection it took is said on took.
func silentServer(t *testing.T) (net.Listener, chan struct{}) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	t.Cleanup(func() { ln.Close(); close(stop) })
	took := make(chan struct{}, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			took <- struct{}{}
			go func() {
				defer c.Close()
				io.Copy(io.Discard, c) // the client's end...
				<-stop                 // ...and still nothing said, nor closed
			}()
		}
	}()
	return ln, took
}

// TestTunnelEndsWhenTheClientGoesAndTheServerIsSilent: a tunnel whose
// client has ended is read on from its server only while the server
// sends: one silent for DrainTimeout after its client's end is closed,
// so a server that never answers nor closes holds no slot after its
// client gave up (with one slot, the next CONNECT is served). The
// positive control: a client that half-closes still gets all a server
// sends, its pieces each within DrainTimeout.
func TestTunnelEndsWhenTheClientGoesAndTheServerIsSilent(t *testing.T) {
	silent, took := silentServer(t)
	slowly, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slowly.Close() })
	go func() {
		for {
			c, err := slowly.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(io.Discard, c) // the client's end first
				for i := range 4 {
					time.Sleep(150 * time.Millisecond)
					fmt.Fprintf(c, "piece %d\n", i)
				}
			}()
		}
	}()
	sp, wp := portOf(t, silent), portOf(t, slowly)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{sp, wp}}, func(c *Config) {
		c.MaxConns = 1
		c.DrainTimeout = 500 * time.Millisecond
	})
	resp, _, c, _ := tp.ask(t, fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", sp))
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT to the silent server: %s", resp.Status)
	}
	<-took
	c.Close()

	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, body, c, br := tp.ask(t, fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", wp))
		if resp.StatusCode == 200 {
			io.WriteString(c, "request")
			c.(*net.UnixConn).CloseWrite()
			got, err := io.ReadAll(bufio.NewReader(br))
			if err != nil || string(got) != "piece 0\npiece 1\npiece 2\npiece 3\n" {
				t.Fatalf("a half-closed client's answer: %q %v", got, err)
			}
			return
		}
		if resp.StatusCode != 429 || time.Now().After(deadline) {
			t.Fatalf("after the client of a silent server closed: %s %q", resp.Status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
