package netbroker

import (
	"errors"
	"io"
	"net"
	"sync"

	"lnk.dev/lnk/internal/connpass"
)

var errHeaderCap = errors.New("request headers over the cap")

// recordingReader sits under the request's bufio.Reader: it caps what is
// read while headers are read (left ≥ 0), and records every byte read
// until stopRecording, so a route can replay the request to its server.
type recordingReader struct {
	r       io.Reader
	left    int // bytes still allowed; -1 for no cap
	over    bool
	err     error // the connection's last read error
	buf     []byte
	stopped bool
}

func (rr *recordingReader) Read(b []byte) (int, error) {
	if rr.left == 0 {
		rr.over = true
		return 0, errHeaderCap
	}
	if rr.left > 0 && len(b) > rr.left {
		b = b[:rr.left]
	}
	n, err := rr.r.Read(b)
	if err != nil {
		rr.err = err
	}
	if rr.left > 0 {
		rr.left -= n
	}
	if !rr.stopped {
		rr.buf = append(rr.buf, b[:n]...)
	}
	return n, err
}

func (rr *recordingReader) stopRecording() []byte {
	rr.stopped = true
	return rr.buf
}

// prefixConn replays the bytes read before reading on from the
// connection (connpass.WithHead), and says when it is closed.
type prefixConn struct {
	*connpass.Conn
	once sync.Once
	done chan struct{}
}

func (c *prefixConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.Close()
}

// oneConnListener hands out one connection, then waits for it to close.
type oneConnListener struct {
	c    *prefixConn
	once sync.Once
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = l.c })
	if c != nil {
		return c, nil
	}
	<-l.c.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error   { return nil }
func (l *oneConnListener) Addr() net.Addr { return l.c.LocalAddr() }

// countingWriter counts bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (cw *countingWriter) Write(b []byte) (int, error) {
	n, err := cw.w.Write(b)
	cw.n += int64(n)
	return n, err
}
