package netbroker

import (
	"io"
	"net"
	"testing"
)

// sourceServer writes size bytes to each connection, then closes it.
func sourceServer(b *testing.B, size int) net.Listener {
	return serveEach(b, func(c net.Conn) {
		buf := make([]byte, 1<<20)
		for sent := 0; sent < size; sent += len(buf) {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	})
}

// receive reads c to its end and checks it carried size bytes.
func receive(size int) func(c net.Conn, err error) error {
	return func(c net.Conn, err error) error {
		if err != nil {
			return err
		}
		defer c.Close()
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{c}, make([]byte, 1<<20))
		if err == nil && n != int64(size) {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
}

// BenchmarkTunnelDownload: BenchmarkTunnelThroughput the other way, as a
// download reads it: 1 GiB from a server through the tunnel beside the
// same over direct loopback TCP, four pairs in turns, each way in (vias).
func BenchmarkTunnelDownload(b *testing.B) {
	const size, pairs = 1 << 30, 4
	ln := sourceServer(b, size)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	for _, v := range vias {
		b.Run("via="+v.name, func(b *testing.B) {
			px := benchProxy(b, port)
			dial := v.dial(b, px, port)
			link, base := measure{also: px.cpu}, measure{}
			var ratios []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ratios = append(ratios, inTurns(b, pairs, &base, &link,
					func() error { return receive(size)(direct(port)) },
					func() error { return receive(size)(dial()) })...)
			}
			link.report(b, "link", size)
			base.report(b, "base", size)
			b.ReportMetric(link.cpu.Seconds()/base.cpu.Seconds(), "x-cpu")
			b.ReportMetric(medianOf(ratios), "x-baseline")
		})
	}
}
