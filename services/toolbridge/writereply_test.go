package toolbridge

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"

	"lnk.dev/lnk/internal/connpass"
)

// TestWriteReplyThroughAPassedConnection: a reply written on a passed
// connection (its slot and its replayed head around the socket) goes out
// on the socket itself, which takes the head and the body as one writev
// (through a wrapper net.Buffers writes each part alone), and the client
// reads the whole answer; a connection of no wrapper is its own socket.
func TestWriteReplyThroughAPassedConnection(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	us, them, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer them.Close()
	pc := &slotConn{Conn: connpass.WithHead(us, []byte("head")), release: func() {}}
	if got := socketOf(pc); got != us {
		t.Fatalf("the socket under a passed connection: %T, want the socket %T", got, us)
	}
	if got := socketOf(server); got != server {
		t.Fatalf("a connection of no wrapper: %T", got)
	}
	body := make([]byte, 100<<10)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	body[0] = '{'
	go func() { writeReply(pc, Reply{Status: http.StatusOK, Body: body, SessionID: "s1"}); pc.Close() }()
	resp, err := http.ReadResponse(bufio.NewReader(them), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil || string(got) != string(body) || resp.Header.Get(SessionHeader) != "s1" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("the reply: %v, %d bytes, session %q, type %q", err, len(got), resp.Header.Get(SessionHeader), resp.Header.Get("Content-Type"))
	}
}

// socketPair is a connected pair of loopback TCP sockets, as a sandbox's
// connection reaches its proxy.
func socketPair() (net.Conn, net.Conn, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return nil, nil, err
	}
	s, err := ln.Accept()
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return s, c, nil
}
