package connpass

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/scmrights"
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
	return &Receiver{ch: ch, buf: make([]byte, MaxHead+1), oob: make([]byte, scmrights.Space(maxFDs))}
}

// maxFDs is the most fds a message may carry: a listener and the fds
// held with it.
const maxFDs = 1 + maxHeld

// recv reads one message through the one SCM_RIGHTS receiver
// (internal/scmrights), waiting on the channel's poller: at most max
// fds, close-on-exec, nothing cut short, nothing but SCM_RIGHTS. A
// message refused there is a *[Refusal], its fds closed; io.EOF is the
// sender's close.
func (r *Receiver) recv(max int) (int, []int, error) {
	rc, err := r.ch.SyscallConn()
	if err != nil {
		return 0, nil, fmt.Errorf("connpass: %w", err)
	}
	var n int
	var fds []int
	rerr := rc.Read(func(fd uintptr) bool {
		n, fds, err = scmrights.Recv(int(fd), r.buf, r.oob, nil, max, 0)
		return err != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	var ref *scmrights.Refusal
	switch {
	case errors.As(err, &ref):
		return 0, nil, refused("%s", ref.Reason)
	case errors.Is(err, net.ErrClosed) || errors.Is(err, unix.ECONNRESET):
		return 0, nil, io.EOF
	case err != nil:
		return 0, nil, fmt.Errorf("connpass: recvmsg: %w", err)
	case n == 0 && len(fds) == 0:
		return 0, nil, io.EOF // SEQPACKET: a zero-length read is the peer's close
	}
	return n, fds, nil
}

// A Refusal is a message that passed no connection: why, in words. The
// channel itself is still good; Receive can be called again.
type Refusal = refusal.Refusal

// refused makes a Refusal saying why.
func refused(format string, a ...any) *Refusal {
	return &Refusal{Reason: fmt.Sprintf(format, a...)}
}

// Receive waits for the next passed connection. It returns a *[Refusal]
// for a message that is not one (its fds closed), and io.EOF once the
// sender has closed the channel.
func (r *Receiver) Receive() (*Conn, error) {
	n, fds, err := r.recv(maxFDs) // oneSocket refuses all but one, with the count
	if err != nil {
		return nil, err
	}
	fd, rerr := oneSocket(fds)
	if rerr == nil && n > MaxHead {
		rerr = refused("more than %d bytes with the connection", MaxHead)
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
		return nil, refused("the fd could not be served: %v", err.Error())
	}
	return c, nil
}

// oneSocket is the one connected stream socket of fds (as received);
// on a refusal every fd is closed.
func oneSocket(fds []int) (int, error) {
	var err error
	if len(fds) != 1 {
		err = refused("%d fds with the message, not one", len(fds))
	} else {
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

// isConnectedStream refuses an fd that is not a stream socket of
// AF_UNIX, AF_INET or AF_INET6, or that listens.
func isConnectedStream(fd int) error {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return refused("the fd is not a socket")
	}
	if typ != unix.SOCK_STREAM {
		return refused("the socket is of type %d, not a stream", typ)
	}
	switch dom, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN); dom {
	case unix.AF_UNIX, unix.AF_INET, unix.AF_INET6:
	default:
		return refused("the socket is of family %d, not unix, IPv4 or IPv6", dom)
	}
	if l, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || l != 0 {
		return refused("the socket listens: not a connection")
	}
	if _, err := unix.Getpeername(fd); err != nil {
		return refused("the socket is not connected")
	}
	return nil
}
