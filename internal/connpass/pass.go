package connpass

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// MaxHead caps the bytes sent with a connection: what the sender read of
// it before deciding to pass it on (the proxy reads a request's line and
// headers, at most 32 KiB, in 4 KiB reads).
const MaxHead = 64 << 10

// Pair makes a channel: two connected SOCK_SEQPACKET sockets,
// close-on-exec. One end stays with the receiver; the other goes to the
// sender (a child's fd).
func Pair() (recv, send *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("connpass: socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "connpass-recv"), os.NewFile(uintptr(fds[1]), "connpass-send"), nil
}

// ReceivingPair is a new channel whose receiving end this process
// serves (as a connection, for NewReceiver) and whose sending end is a
// file to hand another process.
func ReceivingPair() (recv *net.UnixConn, send *os.File, err error) {
	r, send, err := Pair()
	if err != nil {
		return nil, nil, err
	}
	recv, err = Channel(r)
	r.Close()
	if err != nil {
		send.Close()
		return nil, nil, err
	}
	return recv, send, nil
}

// IsChannel refuses an fd that is not a SOCK_SEQPACKET socket.
func IsChannel(fd int) error {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil || typ != unix.SOCK_SEQPACKET {
		return fmt.Errorf("fd %d is no SOCK_SEQPACKET socket", fd)
	}
	return nil
}

// Channel is f, which must be a SOCK_SEQPACKET socket, as a connection
// for [Send] or [Receiver]; f itself can be closed after.
func Channel(f *os.File) (*net.UnixConn, error) {
	if err := IsChannel(int(f.Fd())); err != nil {
		return nil, fmt.Errorf("connpass: %s: %w", f.Name(), err)
	}
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("connpass: %w", err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("connpass: %s is no unix socket", f.Name())
	}
	return uc, nil
}

// ErrTooLong is head past [MaxHead].
var ErrTooLong = fmt.Errorf("connpass: more than %d bytes read before passing the connection", MaxHead)

// Send passes c, with head (what was read of it so far), to the receiver
// at the other end of ch. c stays open here: the caller closes its own
// copy, and the receiver's lives on. Send is safe to call from many
// goroutines: each message is one sendmsg.
func Send(ch *net.UnixConn, c net.Conn, head []byte) error {
	if len(head) > MaxHead {
		return ErrTooLong
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return errors.New("connpass: the connection has no fd")
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("connpass: %w", err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		_, _, serr = ch.WriteMsgUnix(head, unix.UnixRights(int(fd)), nil)
	}); err != nil {
		return fmt.Errorf("connpass: %w", err)
	}
	if serr != nil {
		return fmt.Errorf("connpass: passing the connection: %w", serr)
	}
	return nil
}

// Conn is a passed connection: its head first, then the connection.
type Conn struct {
	net.Conn
	head []byte
}

// WithHead is c read from head on: head's bytes first, then c's. Whoever
// read a request's head before handing the connection on (in this
// process or, by [Send], another) replays it so.
func WithHead(c net.Conn, head []byte) *Conn { return &Conn{Conn: c, head: head} }

// Read reads what is left of the head, then the connection.
func (c *Conn) Read(b []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(b, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// SyscallConn is the connection's own, for a poll of whether the client
// closed.
func (c *Conn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("connpass: no fd")
	}
	return sc.SyscallConn()
}

// CloseWrite half-closes the connection where it can.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
