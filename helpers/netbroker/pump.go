package netbroker

import (
	"errors"
	"io"
	"sync"
)

// A tunnel's bytes are copied through this process in pooled buffers,
// each way, not spliced: BenchmarkTunnelThroughput and
// BenchmarkTunnelDownload (via=relay and via=socket) measured splicing
// no faster and no cheaper in CPU in either direction on this kind of
// machine (the figures are in docs/PERFORMANCE.md once make bench has run). A pumped direction starts with a
// small buffer and takes a large one only once a read fills the small
// one, so an idle tunnel holds 32 KiB and a busy one at most 256 KiB in
// this process each way.
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
