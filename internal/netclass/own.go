package netclass

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// OwnSet knows this machine's own addresses, which the proxy never
// dials: a service the owner runs on 0.0.0.0 or :: answers on every one
// of them. [OwnWatch] is the one a proxy runs with.
type OwnSet interface {
	// AnyOwn reports whether any of addrs (zone dropped, IPv4 unmapped)
	// is one of this machine's addresses now. An error says they cannot
	// be known now, and the proxy refuses: never "none is own".
	AnyOwn(addrs ...netip.Addr) (bool, error)
}

// OwnWatch is this machine's addresses, learned from the kernel and kept
// current on one rtnetlink (NETLINK_ROUTE) socket opened once, before
// lnk-netbroker loads its seccomp filter.
//
// Why this way: the filter allows only unix and inet sockets, so the
// proxy cannot open a netlink socket once confined, and widening the
// filter to AF_NETLINK would give a compromised proxy the whole of
// rtnetlink. A socket opened before the filter, subscribed to the
// address-change groups (RTMGRP_IPV4_IFADDR, RTMGRP_IPV6_IFADDR), needs
// no new socket afterwards: reading the kernel's notices is recvmsg, and
// a fresh dump after an overflow is sendto, both on this socket. (The
// other design, lnk learning them and feeding the proxy over an fd,
// would leave the proxy's view only as fresh as a process it does not
// control, and a second copy of the listing in lnk.)
//
// Every [OwnWatch.AnyOwn] first reads what the kernel has queued, so an
// address added before a check began is known to it. When the kernel
// dropped notices (ENOBUFS: the socket's buffer overflowed) the set is
// listed again (a dump) before it answers; until a list is had, or while
// the socket is broken, AnyOwn returns an error and the proxy refuses.
type OwnWatch struct {
	mu    sync.Mutex
	f     *os.File
	rc    syscall.RawConn
	addrs map[netip.Addr]bool
	port  uint32 // the socket's netlink port id: a dump's answers carry it
	seq   uint32
	buf   []byte
	// stale: notices were dropped and no list has been had since, so
	// the set may lack an address: every check lists again first.
	stale bool
	// relisted counts the lists taken again after an overflow.
	relisted int
}

// ownDumpTimeout bounds waiting for the kernel's answer to one dump (a
// variable for the test of a list that fails).
var ownDumpTimeout = 5 * time.Second

// WatchOwnAddrs opens the rtnetlink socket, subscribes it to address
// changes and lists the addresses. An error means they cannot be known:
// the caller must not start a proxy.
func WatchOwnAddrs() (*OwnWatch, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("listing this machine's addresses: rtnetlink socket: %w", err)
	}
	sa := &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: unix.RTMGRP_IPV4_IFADDR | unix.RTMGRP_IPV6_IFADDR}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("listing this machine's addresses: subscribing to their changes: %w", err)
	}
	local, err := unix.Getsockname(fd)
	nl, ok := local.(*unix.SockaddrNetlink)
	if err != nil || !ok {
		unix.Close(fd)
		return nil, fmt.Errorf("listing this machine's addresses: the rtnetlink socket's port: %v", err)
	}
	w := &OwnWatch{f: os.NewFile(uintptr(fd), "rtnetlink"), port: nl.Pid, buf: make([]byte, 64<<10)}
	if w.rc, err = w.f.SyscallConn(); err != nil {
		w.f.Close()
		return nil, err
	}
	if err := w.dump(); err != nil {
		w.f.Close()
		return nil, fmt.Errorf("listing this machine's addresses: %w", err)
	}
	if len(w.addrs) == 0 {
		// Loopback's own is always there: a list without it was not read
		// right, and an empty set would call every address not own.
		w.f.Close()
		return nil, errors.New("listing this machine's addresses: the kernel listed none, not even loopback's")
	}
	return w, nil
}

// Close closes the socket; AnyOwn then refuses.
func (w *OwnWatch) Close() error { return w.f.Close() }

// AnyOwn reads the changes the kernel queued (listing all again after an
// overflow), then judges addrs.
func (w *OwnWatch) AnyOwn(addrs ...netip.Addr) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.drain(); err != nil {
		return false, fmt.Errorf("this machine's own addresses cannot be known now: %w", err)
	}
	for _, a := range addrs {
		if w.addrs[a.Unmap().WithZone("")] {
			return true, nil
		}
	}
	return false, nil
}

// Addrs is a copy of the set as last read (for the check's probe,
// which listens on one of them, and tests).
func (w *OwnWatch) Addrs() []netip.Addr {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]netip.Addr, 0, len(w.addrs))
	for a := range w.addrs {
		out = append(out, a)
	}
	return out
}

// errOverflow is ENOBUFS on a netlink socket: notices were dropped.
var errOverflow = errors.New("the kernel dropped address notices (ENOBUFS)")

// drain applies every queued notice without waiting. After an overflow,
// or any notice it could not read (it may have held an address), the
// set is stale: it lists all again, now and at every check until a list
// is had.
func (w *OwnWatch) drain() error {
	if !w.stale {
		err := w.readNotices()
		if err == nil {
			return nil
		}
		w.stale = true
		if !errors.Is(err, errOverflow) {
			return err
		}
	}
	return w.relist()
}

// readNotices applies the notices queued on the socket until none is.
func (w *OwnWatch) readNotices() error {
	for {
		n, err := w.recv(false)
		if errors.Is(err, unix.EAGAIN) {
			return nil
		}
		if err != nil {
			return err
		}
		msgs, err := parseAddrMsgs(w.buf[:n])
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.pid == w.port { // an answer to an earlier dump, already done with
				continue
			}
			w.apply(w.addrs, m)
		}
	}
}

// relist lists all again after an overflow; the set stays stale (and
// every check refused) until a list is had.
func (w *OwnWatch) relist() error {
	w.relisted++
	if err := w.dump(); err != nil {
		return err
	}
	w.stale = false
	return nil
}

func (w *OwnWatch) apply(set map[netip.Addr]bool, m addrMsg) {
	switch m.kind {
	case unix.RTM_NEWADDR:
		set[m.addr] = true
	case unix.RTM_DELADDR:
		delete(set, m.addr)
	}
}

// dump asks the kernel for every address (RTM_GETADDR, NLM_F_DUMP) on
// the watched socket and replaces the set with the answer. Notices that
// arrive meanwhile add to it, and none removes from it: an address that
// was removed while listing stays refused until its next notice, which
// errs on the side of refusing. An overflow or an interrupted dump lists
// again, a few times at most.
func (w *OwnWatch) dump() error {
	var last error
	for try := 0; try < 4; try++ {
		fresh, err := w.dumpOnce()
		if err == nil {
			w.addrs = fresh
			return nil
		}
		last = err
		if !errors.Is(err, errOverflow) && !errors.Is(err, errDumpIntr) {
			return err
		}
	}
	return fmt.Errorf("listing again: %w", last)
}

var errDumpIntr = errors.New("the address list changed while it was read")

func (w *OwnWatch) dumpOnce() (map[netip.Addr]bool, error) {
	// What is queued is dropped first: the list asked for next is newer
	// than any of it, and the kernel starts a dump only into a socket
	// with room for it.
	for {
		_, err := w.recv(false)
		if errors.Is(err, unix.EAGAIN) {
			break
		}
		if err != nil && !errors.Is(err, errOverflow) {
			return nil, err
		}
	}
	w.seq++
	seq := w.seq
	req := make([]byte, unix.SizeofNlMsghdr+unix.SizeofIfAddrmsg)
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.RTM_GETADDR)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], seq)
	req[unix.SizeofNlMsghdr] = unix.AF_UNSPEC
	var serr error
	if err := w.rc.Control(func(fd uintptr) {
		serr = unix.Sendto(int(fd), req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, fmt.Errorf("asking for the list: %w", serr)
	}
	fresh := map[netip.Addr]bool{}
	w.f.SetReadDeadline(time.Now().Add(ownDumpTimeout))
	defer w.f.SetReadDeadline(time.Time{})
	for {
		n, err := w.recv(true)
		if err != nil {
			return nil, err
		}
		msgs, err := parseAddrMsgs(w.buf[:n])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			switch {
			case m.pid != w.port: // a notice meanwhile: adds count, removals wait
				if m.kind == unix.RTM_NEWADDR {
					fresh[m.addr] = true
				}
			case m.seq != seq: // an earlier dump's answer
			case m.err != nil:
				return nil, fmt.Errorf("the kernel refused the list: %w", m.err)
			case m.intr:
				return nil, errDumpIntr
			case m.done:
				return fresh, nil
			default:
				w.apply(fresh, m)
			}
		}
	}
}

// recv reads one datagram into w.buf from the kernel, waiting (through
// the runtime's poller, bounded by the read deadline) if wait, else
// returning EAGAIN when none is queued. A truncated datagram, ENOBUFS
// and a sender other than the kernel are errors.
func (w *OwnWatch) recv(wait bool) (int, error) {
	for {
		var n, flags int
		var from unix.Sockaddr
		var rerr error
		read := func(fd uintptr) bool {
			n, _, flags, from, rerr = unix.Recvmsg(int(fd), w.buf, nil, 0)
			return !wait || rerr != unix.EAGAIN
		}
		var err error
		if wait {
			err = w.rc.Read(read)
		} else {
			err = w.rc.Control(func(fd uintptr) { read(fd) })
		}
		if err != nil {
			return 0, err
		}
		switch {
		case rerr == unix.ENOBUFS:
			return 0, errOverflow
		case rerr != nil:
			return 0, rerr
		case flags&unix.MSG_TRUNC != 0:
			return 0, errors.New("an address notice longer than the buffer")
		}
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			continue // not the kernel's: ignored
		}
		return n, nil
	}
}
