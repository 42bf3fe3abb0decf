package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/helpers/netbroker"
)

// listenFD is --listen-fd: the proxy's socket made by its starter
// (netbroker.Listen; for a command with no sandbox a TCP socket on
// 127.0.0.1 the kernel makes, kernel/start_unconfined.go), listening
// already, so lnk starts the sandbox
// without waiting for this process. Connections made before it serves
// wait in the socket's backlog; only this process accepts them.
var listenFD int

// starterSocket takes the socket at --listen-fd and, after the grants
// on stdin (dec), the JSON line (netbroker.Told) saying the secret and
// placeholders lnk chose and told the sandbox; strictly decoded, never
// on argv or in the environment. Nil, with a zero Told, without
// --listen-fd: this process makes its socket and tells them itself.
func starterSocket(dec *json.Decoder) (net.Listener, netbroker.Told, error) {
	var told netbroker.Told
	if listenFD == 0 {
		return nil, told, nil
	}
	if listenFD < 3 {
		return nil, told, fmt.Errorf("--listen-fd %d is not a handed fd", listenFD)
	}
	dom, err1 := unix.GetsockoptInt(listenFD, unix.SOL_SOCKET, unix.SO_DOMAIN)
	typ, err2 := unix.GetsockoptInt(listenFD, unix.SOL_SOCKET, unix.SO_TYPE)
	acc, err3 := unix.GetsockoptInt(listenFD, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
	if err := errors.Join(err1, err2, err3); err != nil || (dom != unix.AF_UNIX && dom != unix.AF_INET) || typ != unix.SOCK_STREAM || acc != 1 {
		return nil, told, fmt.Errorf("--listen-fd %d is no listening unix stream socket", listenFD)
	}
	if dom == unix.AF_INET && !onLoopback(listenFD) {
		// A command with no sandbox reaches its proxy on a port
		// (kernel/start_unconfined.go): this machine's loopback alone.
		return nil, told, fmt.Errorf("--listen-fd %d is a TCP socket not bound to 127.0.0.1 alone", listenFD)
	}
	if err := dec.Decode(&told); err != nil {
		return nil, told, fmt.Errorf("reading the secret and placeholders on stdin: %w", err)
	}
	if len(told.Secret) != 64 {
		return nil, told, errors.New("the secret on stdin is not 32 bytes of hex")
	}
	f := os.NewFile(uintptr(listenFD), "listen")
	ln, err := net.FileListener(f)
	f.Close() // ln holds its own copy
	if err != nil {
		return nil, told, fmt.Errorf("--listen-fd %d: %w", listenFD, err)
	}
	return ln, told, nil
}

// onLoopback reports whether the IPv4 socket fd is bound to 127.0.0.1.
func onLoopback(fd int) bool {
	sa, err := unix.Getsockname(fd)
	in, ok := sa.(*unix.SockaddrInet4)
	return err == nil && ok && in.Addr == [4]byte{127, 0, 0, 1}
}
