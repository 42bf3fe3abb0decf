package connpass

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// channel is a connected pair: a Receiver on one end, the sending end.
func channel(t *testing.T) (*Receiver, *net.UnixConn) {
	t.Helper()
	rf, sf, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := Channel(rf)
	rf.Close()
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Channel(sf)
	sf.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close(); sc.Close() })
	return NewReceiver(rc), sc
}

// unixPair is a connected stream pair, as a client and the end a server
// accepted.
func unixPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	conn := func(fd int) net.Conn {
		f := os.NewFile(uintptr(fd), "pair")
		defer f.Close()
		c, err := net.FileConn(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	return conn(fds[0]), conn(fds[1])
}

func TestPassesAConnectionWithWhatWasRead(t *testing.T) {
	r, ch := channel(t)
	client, accepted := unixPair(t)
	if err := Send(ch, accepted, []byte("POST /mcp/x HTTP/1.1\r\n")); err != nil {
		t.Fatal(err)
	}
	accepted.Close() // the sender's copy: the receiver's lives on
	got, err := r.Receive()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	client.Write([]byte("Host: 127.0.0.1\r\n\r\n"))
	client.(*net.UnixConn).CloseWrite()
	all, err := io.ReadAll(got)
	if err != nil {
		t.Fatal(err)
	}
	if want := "POST /mcp/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"; string(all) != want {
		t.Fatalf("read %q, want %q", all, want)
	}
	got.Write([]byte("answer"))
	got.CloseWrite()
	back, _ := io.ReadAll(client)
	if string(back) != "answer" {
		t.Fatalf("the client read %q", back)
	}
	if _, err := got.SyscallConn(); err != nil {
		t.Fatalf("a passed connection has no fd to poll: %v", err)
	}
}

func TestPassesATCPConnection(t *testing.T) {
	r, ch := channel(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if err := Send(ch, accepted, nil); err != nil {
		t.Fatal(err)
	}
	accepted.Close()
	got, err := r.Receive()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	got.Write([]byte("hi"))
	b := make([]byte, 2)
	if _, err := io.ReadFull(client, b); err != nil || string(b) != "hi" {
		t.Fatalf("the client read %q, %v", b, err)
	}
}

func TestHeadOverTheCapIsNotSent(t *testing.T) {
	_, ch := channel(t)
	_, accepted := unixPair(t)
	if err := Send(ch, accepted, make([]byte, MaxHead+1)); !errors.Is(err, ErrTooLong) {
		t.Fatalf("a head of %d bytes: %v, want ErrTooLong", MaxHead+1, err)
	}
}

func TestEndsWhenTheSenderCloses(t *testing.T) {
	r, ch := channel(t)
	ch.Close()
	if _, err := r.Receive(); err != io.EOF {
		t.Fatalf("after the sender closed: %v, want io.EOF", err)
	}
}

func TestReceivedFDIsCloseOnExec(t *testing.T) {
	r, ch := channel(t)
	_, accepted := unixPair(t)
	Send(ch, accepted, nil)
	got, err := r.Receive()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	raw, _ := got.SyscallConn()
	raw.Control(func(fd uintptr) {
		if fl, _ := unix.FcntlInt(fd, unix.F_GETFD, 0); fl&unix.FD_CLOEXEC == 0 {
			t.Error("the passed connection's fd is not close-on-exec")
		}
	})
}

func TestHeadsAreEqualToWhatWasSent(t *testing.T) {
	r, ch := channel(t)
	head := bytes.Repeat([]byte("0123456789abcdef"), MaxHead/16)
	_, accepted := unixPair(t)
	if err := Send(ch, accepted, head); err != nil {
		t.Fatal(err)
	}
	got, err := r.Receive()
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	b := make([]byte, len(head))
	if _, err := io.ReadFull(got, b); err != nil || !bytes.Equal(b, head) {
		t.Fatalf("a %d-byte head came back changed (%v)", len(head), err)
	}
}
