package connpass

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Receiver takes passed connections from one channel. Only one goroutine
// may call Receive.
type Receiver struct {
	ch  *net.UnixConn
	buf []byte
	oob []byte
}

// NewReceiver receives on ch.
func NewReceiver(ch *net.UnixConn) *Receiver {
	return &Receiver{ch: ch, buf: make([]byte, MaxHead+1), oob: make([]byte, unix.CmsgSpace(4*maxFDs))}
}

// maxFDs is more than a message may carry, so that two or three arrive
// (and are closed, and the message refused) rather than cut short.
const maxFDs = 4

// A Refusal is a message that passed no connection: why, in words. The
// channel itself is still good; Receive can be called again.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return "connpass: refused: " + r.Reason }

// Receive waits for the next passed connection. It returns a *[Refusal]
// for a message that is not one (its fds closed), and io.EOF once the
// sender has closed the channel.
func (r *Receiver) Receive() (*Conn, error) {
	n, oobn, flags, _, err := r.ch.ReadMsgUnix(r.buf, r.oob)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, unix.ECONNRESET) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("connpass: recvmsg: %w", err)
	}
	if n == 0 && oobn == 0 {
		return nil, io.EOF // SEQPACKET: a zero-length read is the peer's close
	}
	fd, rerr := oneSocket(r.oob[:oobn], flags)
	if rerr == nil && n > MaxHead {
		rerr = &Refusal{fmt.Sprintf("more than %d bytes with the connection", MaxHead)}
		unix.Close(fd)
	}
	if rerr != nil {
		return nil, rerr
	}
	c, err := fileConn(fd)
	if err != nil {
		return nil, err
	}
	return WithHead(c, append([]byte(nil), r.buf[:n]...)), nil
}

// fileConn is the passed socket fd as a connection (of its own fd: fd is
// closed).
func fileConn(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "passed-conn")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, &Refusal{"the fd could not be served: " + err.Error()}
	}
	return c, nil
}

// oneSocket is the one connected stream socket the control data oob
// carries; on a refusal every fd in it is closed.
func oneSocket(oob []byte, flags int) (int, error) {
	fds, err := rights(oob)
	switch {
	case err != nil:
	case flags&unix.MSG_CTRUNC != 0:
		err = &Refusal{"control data cut short (more fds than a message may carry)"}
	case flags&unix.MSG_TRUNC != 0:
		err = &Refusal{fmt.Sprintf("a message over %d bytes", MaxHead)}
	case len(fds) != 1:
		err = &Refusal{fmt.Sprintf("%d fds with the message, not one", len(fds))}
	default:
		err = isConnectedStream(fds[0])
	}
	if err != nil {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, err
	}
	return fds[0], nil
}

// rights are the fds of the SCM_RIGHTS messages in oob; any other control
// message is a refusal (its fds are still returned, to be closed).
func rights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, &Refusal{"control data that does not parse: " + err.Error()}
	}
	var fds []int
	var bad error
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_SOCKET || m.Header.Type != unix.SCM_RIGHTS {
			bad = &Refusal{fmt.Sprintf("control message %d/%d is not SCM_RIGHTS", m.Header.Level, m.Header.Type)}
			continue
		}
		if len(m.Data)%4 != 0 { // unix.ParseUnixRights would index past its end
			bad = &Refusal{fmt.Sprintf("SCM_RIGHTS of %d bytes", len(m.Data))}
			continue
		}
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			bad = &Refusal{"SCM_RIGHTS that does not parse"}
			continue
		}
		fds = append(fds, got...)
	}
	return fds, bad
}

// isConnectedStream refuses an fd that is not a stream socket of
// AF_UNIX, AF_INET or AF_INET6, or that listens.
func isConnectedStream(fd int) error {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return &Refusal{"the fd is not a socket"}
	}
	if typ != unix.SOCK_STREAM {
		return &Refusal{fmt.Sprintf("the socket is of type %d, not a stream", typ)}
	}
	switch dom, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN); dom {
	case unix.AF_UNIX, unix.AF_INET, unix.AF_INET6:
	default:
		return &Refusal{fmt.Sprintf("the socket is of family %d, not unix, IPv4 or IPv6", dom)}
	}
	if l, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || l != 0 {
		return &Refusal{"the socket listens: not a connection"}
	}
	if _, err := unix.Getpeername(fd); err != nil {
		return &Refusal{"the socket is not connected"}
	}
	return nil
}
