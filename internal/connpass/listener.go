package connpass

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// The sandbox's relay listener is handed once, from the sandbox's first
// stage (internal/initstage) to its proxy (helpers/netbroker), on a
// channel of its own that only those two hold: one message, the bytes
// [ListenerTag], the listening socket's fd, and after it the fds the
// proxy is to hold open for as long as it serves (the lifeline's read end).
// The proxy then accepts the sandbox's connections itself: no process
// inside the sandbox relays them, and no byte of theirs passes through
// anything but the proxy.

// ListenerTag is the data of the one message that hands a listener.
const ListenerTag = "relay-listener"

// maxHeld is how many fds may come with the listener to be held.
const maxHeld = 1

// PassListener sends the listening socket ln, and the fds in held, on
// the channel fd ch (a SOCK_SEQPACKET socket): one message. The caller
// closes its own copies after.
func PassListener(ch, ln int, held ...int) error {
	if len(held) > maxHeld {
		return fmt.Errorf("connpass: %d fds to hold with the listener, at most %d", len(held), maxHeld)
	}
	fds := append([]int{ln}, held...)
	for {
		err := unix.Sendmsg(ch, []byte(ListenerTag), unix.UnixRights(fds...), nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("connpass: handing the listener: %w", err)
		}
		return nil
	}
}

// ReceiveListener waits for the one message that hands the relay
// listener: a TCP socket listening on a loopback address, and at most
// [maxHeld] fds after it, each a pipe (the lifeline), returned to be held
// open and never read. Anything else — other bytes, no fd, a connected
// or non-TCP socket, one listening elsewhere than on loopback, a held
// fd that is no pipe — is a *[Refusal], every fd that came closed. It
// returns io.EOF if the sender closed its end with nothing handed.
func (r *Receiver) ReceiveListener() (net.Listener, []*os.File, error) {
	n, fds, err := r.recv(1 + maxHeld)
	if err != nil {
		return nil, nil, err // io.EOF: the sender closed its end, handing nothing
	}
	var rerr error
	switch {
	case string(r.buf[:n]) != ListenerTag:
		rerr = refused("a message that does not hand the relay's listener")
	case len(fds) == 0 || len(fds) > 1+maxHeld:
		rerr = refused("%d fds with the listener, not 1 to %d", len(fds), 1+maxHeld)
	default:
		rerr = isLoopbackListener(fds[0])
		for _, fd := range fds[1:] {
			if rerr == nil {
				rerr = isPipe(fd)
			}
		}
	}
	if rerr != nil {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, nil, rerr
	}
	f := os.NewFile(uintptr(fds[0]), "relay-listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		for _, fd := range fds[1:] {
			unix.Close(fd)
		}
		return nil, nil, refused("the listener could not be served: %v", err.Error())
	}
	var held []*os.File
	for _, fd := range fds[1:] {
		held = append(held, os.NewFile(uintptr(fd), "held"))
	}
	return ln, held, nil
}

// isLoopbackListener refuses an fd that is not a TCP socket listening on
// a loopback address.
func isLoopbackListener(fd int) error {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return refused("the listener's fd is not a socket")
	}
	if typ != unix.SOCK_STREAM {
		return refused("the listener is a socket of type %d, not a stream", typ)
	}
	if l, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || l != 1 {
		return refused("the listener's socket does not listen")
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return refused("the listener's address: %v", err.Error())
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		if a.Addr[0] == 127 {
			return nil
		}
	case *unix.SockaddrInet6:
		if a.Addr == [16]byte{15: 1} {
			return nil
		}
	default:
		return refused("the listener is no TCP socket")
	}
	return refused("the listener is not on a loopback address")
}

// isPipe refuses an fd that is not a pipe.
func isPipe(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return refused("an fd to hold that is not a pipe")
	}
	return nil
}

// InheritedListener serves the listening socket fd a parent handed this
// process at its start (exec.Cmd.ExtraFiles): a TCP socket listening on
// a loopback address, as [Receiver.ReceiveListener] takes it, else a
// *[Refusal]. The fd is closed either way (the listener holds its own
// copy, close-on-exec).
func InheritedListener(fd int) (net.Listener, error) {
	if fd < 3 {
		return nil, refused("fd %d is standard input, output or error, not a handed listener", fd)
	}
	if err := isLoopbackListener(fd); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "inherited-listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return nil, refused("the listener could not be served: %v", err.Error())
	}
	return ln, nil
}
