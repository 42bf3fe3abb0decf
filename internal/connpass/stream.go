package connpass

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// Marker is the one byte a connection passed on a stream socket comes
// with ([SendOnStream]): no HTTP request line or SOCKS5 greeting begins
// with a NUL.
const Marker = 0x00

// SendOnStream passes c on u, a unix stream connection made for it alone:
// the [Marker] byte with c's fd attached, in one sendmsg. The sandbox's
// relay passes each connection it accepts to the proxy's socket so; the
// caller then closes both its copies.
func SendOnStream(u *net.UnixConn, c net.Conn) error {
	return Send(u, c, []byte{Marker})
}

// FirstRead is the first read of a connection accepted on a unix stream
// socket that takes passed connections as well as its own clients: one
// recvmsg into buf. Either it carries a passed connection (the Marker
// alone, with one connected stream socket: returned as passed), or it is
// the client's own first n bytes, with nothing attached. Anything else —
// an fd with other bytes, two fds, the Marker with none — is a
// *[Refusal], every fd that came closed. On an error nothing was read
// (n is 0).
func FirstRead(u *net.UnixConn, buf []byte) (n int, passed *Conn, err error) {
	oob := make([]byte, unix.CmsgSpace(4*maxFDs))
	n, oobn, flags, _, err := u.ReadMsgUnix(buf, oob)
	if err != nil {
		return 0, nil, err // n may be -1 (recvmsg's own)
	}
	if oobn == 0 && flags&unix.MSG_CTRUNC == 0 {
		if n > 0 && buf[0] == Marker {
			return 0, nil, &Refusal{"the marker of a passed connection with no connection"}
		}
		return n, nil, nil
	}
	fd, err := oneSocket(oob[:oobn], flags)
	if err != nil {
		return 0, nil, err
	}
	if n != 1 || buf[0] != Marker {
		unix.Close(fd)
		return 0, nil, &Refusal{fmt.Sprintf("an fd with %d bytes that are not the marker", n)}
	}
	c, err := fileConn(fd)
	if err != nil {
		return 0, nil, err
	}
	return 0, WithHead(c, nil), nil
}
