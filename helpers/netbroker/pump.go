package netbroker

import (
	"errors"
	"io"
	"net"
	"sync"
)

// A tunnel's bytes from the sandbox's unix socket are copied through
// this process in pooled buffers, not spliced; bytes from an upstream TCP
// socket are spliced. Measured here (x-cpu of BenchmarkTunnelThroughput
// and BenchmarkTunnelDownload, CPU a GiB over a direct transfer's):
// splicing unix→pipe→TCP cost 1.6-2.5x against 1.25-1.5x for a read and
// a write through a 256 KiB buffer, while splicing TCP→unix cost
// 1.03-1.07x against 1.25-1.31x pumped. A pumped direction starts with a
// small buffer and takes a large one only once a read fills the small
// one, so an idle tunnel holds 32 KiB and a busy one at most 256 KiB in
// this process (plus the kernel's pipe while splicing).
const (
	smallPump = 32 << 10
	largePump = 256 << 10
)

var (
	smallBufs = sync.Pool{New: func() any { b := make([]byte, smallPump); return &b }}
	largeBufs = sync.Pool{New: func() any { b := make([]byte, largePump); return &b }}
)

// pump copies src to dst until src ends (a nil error) or either fails,
// and returns the bytes written.
func pump(dst io.Writer, src io.Reader) (n int64, err error) {
	pool := &smallBufs
	bp := pool.Get().(*[]byte)
	defer func() { pool.Put(bp) }()
	for {
		buf := *bp
		r, rerr := src.Read(buf)
		if r > 0 {
			w, werr := dst.Write(buf[:r])
			n += int64(w)
			if werr != nil {
				return n, werr
			}
			if w != r {
				return n, io.ErrShortWrite
			}
			if r == len(buf) && pool == &smallBufs {
				pool.Put(bp)
				pool = &largeBufs
				bp = pool.Get().(*[]byte)
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return n, nil
			}
			return n, rerr
		}
	}
}

// copyFrom copies src to dst until src ends, and returns the bytes
// written: spliced in the kernel when src is a TCP socket (io.Copy finds
// TCPConn.WriteTo), pumped otherwise (see the top of this file).
func copyFrom(dst net.Conn, src net.Conn) (int64, error) {
	if _, ok := src.(*net.TCPConn); ok {
		return io.Copy(dst, src)
	}
	return pump(dst, src)
}
