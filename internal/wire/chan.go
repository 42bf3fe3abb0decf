package wire

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// conn is the raw transport under a Client or a Server: one
// SOCK_SEQPACKET socket, one reader, many senders. A conn made by newConn
// waits in the runtime's netpoller (rc); one made for a single record
// (ReadRecord, WriteRecord) makes blocking calls on a bare fd.
type conn struct {
	f  *os.File
	rc syscall.RawConn // nil: blocking calls on fd
	fd int

	mu      sync.RWMutex // held for reading by senders, for writing by close
	closed  bool         // guarded by mu
	sdOnce  sync.Once
	oob     []byte // reader's control buffer
	buf     []byte // reader's data buffer
	closeFn sync.Once
}

// waitInSyscall makes new client conns wait in a blocking recvmsg instead
// of the poller; only the benchmark that compares the two sets it.
var waitInSyscall = false

// newConn takes ownership of f, a SOCK_SEQPACKET unix socket. A blocking
// conn waits in recvmsg itself; the other kind in the runtime's poller.
func newConn(f *os.File, blocking bool) (*conn, error) {
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var typ, dup int
	rc.Control(func(fd uintptr) {
		typ, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TYPE)
		if err == nil {
			dup, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("channel is not a socket: %w", err)
	}
	if typ != unix.SOCK_SEQPACKET {
		unix.Close(dup)
		return nil, fmt.Errorf("channel is socket type %d, not SOCK_SEQPACKET", typ)
	}
	if blocking {
		// The flag is the open file's, shared with f: set it either way.
		if err := unix.SetNonblock(dup, false); err != nil {
			unix.Close(dup)
			return nil, err
		}
		return &conn{f: os.NewFile(uintptr(dup), "wire-channel"), fd: dup,
			oob: make([]byte, unix.CmsgSpace(4*MaxFDs)), buf: make([]byte, MaxRecord)}, nil
	}
	// A non-blocking fd of our own, so the runtime's poller waits for it.
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return nil, err
	}
	pf := os.NewFile(uintptr(dup), "wire-channel")
	prc, err := pf.SyscallConn()
	if err != nil {
		pf.Close()
		return nil, err
	}
	return &conn{
		f:   pf,
		rc:  prc,
		fd:  -1,
		oob: make([]byte, unix.CmsgSpace(4*MaxFDs)),
		buf: make([]byte, MaxRecord),
	}, nil
}

// sendmsg and recvmsg wait in the poller when there is one.
func (c *conn) sendmsg(p, oob []byte) error {
	if c.rc == nil {
		for {
			err := unix.Sendmsg(c.fd, p, oob, nil, unix.MSG_NOSIGNAL)
			if err != unix.EINTR {
				return err
			}
		}
	}
	var err error
	werr := c.rc.Write(func(fd uintptr) bool {
		err = unix.Sendmsg(int(fd), p, oob, nil, unix.MSG_NOSIGNAL)
		return err != unix.EAGAIN && err != unix.EINTR
	})
	if err == nil && werr != nil {
		err = unix.EPIPE
	}
	return err
}

func (c *conn) recvmsg() (n, oobn, flags int, err error) {
	if c.rc == nil {
		for {
			n, oobn, flags, _, err = unix.Recvmsg(c.fd, c.buf, c.oob, unix.MSG_CMSG_CLOEXEC)
			if err != unix.EINTR {
				return
			}
		}
	}
	rerr := c.rc.Read(func(fd uintptr) bool {
		n, oobn, flags, _, err = unix.Recvmsg(int(fd), c.buf, c.oob, unix.MSG_CMSG_CLOEXEC)
		return err != unix.EAGAIN && err != unix.EINTR
	})
	if err == nil && rerr != nil {
		err = unix.ECONNRESET
	}
	return
}

// send writes one record with files, then raw fds, beside it. Both stay
// the caller's.
func (c *conn) send(r Record, files []*os.File, raw ...int) error {
	r.NFD = len(files) + len(raw)
	rec, err := AppendRecord(make([]byte, 0, HeaderSize+len(r.Body)), r)
	if err != nil {
		return err
	}
	var oob []byte
	if len(files) == 0 && len(raw) > 0 {
		oob = unix.UnixRights(raw...)
	} else if len(files) > 0 {
		fds := make([]int, len(files), len(files)+len(raw))
		for i, f := range files {
			// Not f.Fd(): that would switch the caller's file to
			// blocking mode. The file is kept alive until sent.
			rc, err := f.SyscallConn()
			if err != nil {
				return fmt.Errorf("fd %d to send: %w", i, err)
			}
			rc.Control(func(fd uintptr) { fds[i] = int(fd) })
		}
		oob = unix.UnixRights(append(fds, raw...)...)
		defer runtime.KeepAlive(files)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.closed {
		return ErrClosed
	}
	err = c.sendmsg(rec, oob)
	if errors.Is(err, unix.EPIPE) || errors.Is(err, unix.ECONNRESET) {
		return fmt.Errorf("%w: the peer has gone", ErrClosed)
	}
	if err != nil {
		return fmt.Errorf("sendmsg: %w", err)
	}
	return nil
}

// recv reads one record. Only one goroutine may call it. The record's
// body is a fresh copy. On any error every fd that arrived is closed.
func (c *conn) recv() (Record, []*os.File, error) {
	n, oobn, flags, err := c.recvmsg()
	if err != nil {
		if errors.Is(err, unix.ECONNRESET) {
			return Record{}, nil, fmt.Errorf("%w: the peer has gone", ErrClosed)
		}
		return Record{}, nil, fmt.Errorf("%w: recvmsg: %v", ErrClosed, err)
	}
	fds, cerr := parseRights(c.oob[:oobn])
	if cerr == nil && flags&unix.MSG_CTRUNC != 0 {
		cerr = violation("control data truncated (MSG_CTRUNC): more fds than the cap of %d", MaxFDs)
	}
	if cerr == nil && flags&unix.MSG_TRUNC != 0 {
		cerr = violation("record over the %d-byte cap (MSG_TRUNC)", MaxRecord)
	}
	if cerr == nil && n == 0 && len(fds) == 0 {
		return Record{}, nil, fmt.Errorf("%w: the peer has gone", ErrClosed)
	}
	var r Record
	if cerr == nil {
		r, cerr = ParseRecord(c.buf[:n], len(fds))
	}
	if cerr != nil {
		closeFDs(fds)
		return Record{}, nil, cerr
	}
	r.Body = append([]byte(nil), r.Body...)
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "wire-fd")
	}
	return r, files, nil
}

// parseRights returns every fd in the control data. Anything but
// SCM_RIGHTS is a violation; the fds found are still returned so the
// caller closes them.
func parseRights(oob []byte) ([]int, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, violation("control data: %v", err)
	}
	var fds []int
	var bad error
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_SOCKET || m.Header.Type != unix.SCM_RIGHTS {
			bad = violation("control message %d/%d is not SCM_RIGHTS", m.Header.Level, m.Header.Type)
			continue
		}
		got, err := unix.ParseUnixRights(&m)
		if err != nil {
			bad = violation("SCM_RIGHTS: %v", err)
			continue
		}
		fds = append(fds, got...)
	}
	return fds, bad
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// CloseFiles closes every non-nil file in fs.
func CloseFiles(fs []*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// shutdown wakes the reader and every blocked sender; the fd stays open
// until release so no other file can take its number meanwhile.
func (c *conn) shutdown() {
	c.sdOnce.Do(func() {
		if c.rc == nil {
			unix.Shutdown(c.fd, unix.SHUT_RDWR)
			return
		}
		c.rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_RDWR) })
	})
}

// release closes the socket; call it once the reader has returned.
func (c *conn) release() {
	c.shutdown()
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.closeFn.Do(func() {
		if c.f != nil {
			c.f.Close()
		}
	})
}
