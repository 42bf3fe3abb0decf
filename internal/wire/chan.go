package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/scmrights"
)

// conn is the raw transport under a Client or a Server: one blocking
// SOCK_SEQPACKET socket, one reader at a time, many senders. Every call
// is a blocking sendmsg or recvmsg on the bare fd: no poller, so a reply
// wakes the thread that waits for it directly.
type conn struct {
	f  *os.File // nil for ReadRecord and WriteRecord's borrowed fd
	fd int

	mu      sync.RWMutex // held for reading by senders, for writing by close
	closed  bool         // guarded by mu
	sdOnce  sync.Once
	closeFn sync.Once

	// The reader's buffers, reused by every recvmsg; only the one reader
	// touches them.
	oob []byte
	buf []byte
	fds []int
}

// newConn takes ownership of f, a SOCK_SEQPACKET unix socket, and makes
// its own blocking, close-on-exec duplicate of it.
func newConn(f *os.File) (*conn, error) {
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
	// The flag is the open file's, shared with f: set it either way.
	if err := unix.SetNonblock(dup, false); err != nil {
		unix.Close(dup)
		return nil, err
	}
	return newRawConn(os.NewFile(uintptr(dup), "wire-channel"), dup), nil
}

func newRawConn(f *os.File, fd int) *conn {
	return &conn{f: f, fd: fd, oob: make([]byte, scmrights.Space(MaxFDs)),
		buf: make([]byte, MaxRecord), fds: make([]int, 0, MaxFDs)}
}

func (c *conn) sendmsg(p, oob []byte) error {
	for {
		err := unix.Sendmsg(c.fd, p, oob, nil, unix.MSG_NOSIGNAL)
		if err != unix.EINTR {
			return err
		}
	}
}

// recvmsg reads one message through the one SCM_RIGHTS receiver
// (internal/scmrights): close-on-exec, at most MaxFDs fds, nothing cut
// short, nothing but SCM_RIGHTS. flags are added (MSG_DONTWAIT).
func (c *conn) recvmsg(flags int) (n int, fds []int, err error) {
	return scmrights.Recv(c.fd, c.buf, c.oob, c.fds, MaxFDs, flags)
}

// sendBuf is where a record and its control data are built; sendBufs
// keeps them, but not one over maxPooled bytes.
type sendBuf struct{ rec, oob []byte }

var sendBufs = sync.Pool{New: func() any { return &sendBuf{rec: make([]byte, 0, 512)} }}

const maxPooled = 16 << 10

// send writes one record with files, then raw fds, beside it. Both stay
// the caller's.
func (c *conn) send(r Record, files []*os.File, raw ...int) error {
	r.NFD = len(files) + len(raw)
	sb := sendBufs.Get().(*sendBuf)
	defer sendBufs.Put(sb)
	rec, err := AppendRecord(sb.rec[:0], r)
	if err != nil {
		return err
	}
	if cap(rec) <= maxPooled {
		sb.rec = rec
	}
	var oob []byte
	if len(files) == 0 && len(raw) > 0 {
		oob = appendUnixRights(sb.oob[:0], raw)
		sb.oob = oob
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

// recvRaw reads one record. Only the channel's one reader may call it,
// and what it returns is the reader's until its next call: the record's
// body aliases the read buffer and the fds slice is reused. On any error
// every fd that arrived is closed.
func (c *conn) recvRaw() (Record, []int, error) {
	return c.parse(c.recvmsg(0))
}

// parse makes what recvmsg returned a record and its fds (recvRaw).
func (c *conn) parse(n int, fds []int, err error) (Record, []int, error) {
	c.fds = fds[:0]
	// Recv returns its *Refusal unwrapped: a type assertion, not
	// errors.As, whose target would be allocated on every record.
	ref, refused := err.(*scmrights.Refusal)
	switch {
	case refused:
		return Record{}, nil, violation("%s", ref.Reason)
	case errors.Is(err, unix.ECONNRESET):
		return Record{}, nil, fmt.Errorf("%w: the peer has gone", ErrClosed)
	case err != nil:
		return Record{}, nil, fmt.Errorf("%w: recvmsg: %v", ErrClosed, err)
	case n == 0 && len(fds) == 0:
		return Record{}, nil, fmt.Errorf("%w: the peer has gone", ErrClosed)
	}
	r, err := ParseRecord(c.buf[:n], len(fds))
	if err != nil {
		closeFDs(fds)
		return Record{}, nil, err
	}
	return r, fds, nil
}

// recv is recvRaw with the body copied and the fds made files.
func (c *conn) recv() (Record, []*os.File, error) {
	r, fds, err := c.recvRaw()
	if err != nil {
		return r, nil, err
	}
	r.Body = append([]byte(nil), r.Body...)
	return r, fdFiles(fds), nil
}

func fdFiles(fds []int) []*os.File {
	if len(fds) == 0 {
		return nil
	}
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), "wire-fd")
	}
	return files
}

// appendUnixRights appends one SCM_RIGHTS control message carrying fds
// to dst, as unix.UnixRights makes it.
func appendUnixRights(dst []byte, fds []int) []byte {
	const hdr = unix.SizeofCmsghdr
	n := unix.CmsgSpace(4 * len(fds))
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	b := dst[start:]
	l := unix.CmsgLen(4 * len(fds))
	if hdr == 16 {
		binary.NativeEndian.PutUint64(b, uint64(l))
	} else {
		binary.NativeEndian.PutUint32(b, uint32(l))
	}
	binary.NativeEndian.PutUint32(b[hdr-8:], unix.SOL_SOCKET)
	binary.NativeEndian.PutUint32(b[hdr-4:], unix.SCM_RIGHTS)
	for i, fd := range fds {
		binary.NativeEndian.PutUint32(b[hdr+4*i:], uint32(fd))
	}
	return dst
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
		unix.Shutdown(c.fd, unix.SHUT_RDWR)
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
