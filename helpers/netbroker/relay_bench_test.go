package netbroker

import (
	"io"
	"net"
	"testing"
	"time"

	"lnk.dev/lnk/internal/connpass"
)

// benchRelay does, in this process, what the sandbox's relay does
// (lnk-init relay): it accepts TCP on loopback and passes each connection
// to the proxy's socket (the marker byte with its fd), carrying no byte
// itself. It returns the relay's address.
func benchRelay(b *testing.B, sock string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer u.Close()
				connpass.SendOnStream(u.(*net.UnixConn), c)
			}()
		}
	}()
	return ln.Addr().String()
}

// BenchmarkTunnelThroughputViaRelay: 1 GiB through a CONNECT tunnel on
// the sandbox's own path — a TCP connection to the relay, which passes it
// to the proxy — beside the same transfer over direct loopback TCP, in
// turns as BenchmarkTunnelThroughput. The proxy copies between the
// sandbox's TCP connection and the upstream's (pump.go); three programs
// share the two cores where a direct transfer has two.
func BenchmarkTunnelThroughputViaRelay(b *testing.B) {
	const size, pairs = 1 << 30, 4
	ln := sinkServer(b, size)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	relay := benchRelay(b, benchProxy(b, port))
	buf := make([]byte, 1<<20)
	var link, base measure
	var ratios []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ratios = append(ratios, inTurns(b, pairs, &base, &link,
			func() error { return transferVia(direct(port))(buf, size) },
			func() error { return transferVia(connectVia("tcp", relay, port))(buf, size) })...)
	}
	link.report(b, "link", size)
	base.report(b, "base", size)
	b.ReportMetric(link.cpu.Seconds()/base.cpu.Seconds(), "x-cpu")
	b.ReportMetric(medianOf(ratios), "x-baseline")
}

// BenchmarkConnectSetupViaRelay: p50 time to a first echoed byte through
// a fresh tunnel on the sandbox's own path (relay, then proxy) beside a
// fresh direct connection.
func BenchmarkConnectSetupViaRelay(b *testing.B) {
	ln := echoBench(b)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	relay := benchRelay(b, benchProxy(b, port))
	var link, base []time.Duration
	one := []byte{7}
	roundTrip := func(c net.Conn, err error) error {
		if err != nil {
			return err
		}
		defer c.Close()
		c.Write(one)
		_, err = io.ReadFull(c, make([]byte, 1))
		return err
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := roundTrip(direct(port)); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := roundTrip(connectVia("tcp", relay, port)); err != nil {
			b.Fatal(err)
		}
		base, link = append(base, t1.Sub(t0)), append(link, time.Since(t1))
	}
	l, d := median(link), median(base)
	b.ReportMetric(float64(l.Nanoseconds()), "link-ns/op")
	b.ReportMetric(float64(d.Nanoseconds()), "base-ns/op")
	b.ReportMetric(float64(l-d)/1e3, "added-µs-p50")
	b.ReportMetric(float64(l)/float64(d), "x-baseline")
}

// BenchmarkTunnelDownloadViaRelay: BenchmarkTunnelDownload on the
// sandbox's own path (relay, then proxy), in turns with direct.
func BenchmarkTunnelDownloadViaRelay(b *testing.B) {
	const size, pairs = 1 << 30, 4
	ln := sourceServer(b, size)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	relay := benchRelay(b, benchProxy(b, port))
	var link, base measure
	var ratios []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ratios = append(ratios, inTurns(b, pairs, &base, &link,
			func() error { return receive(size)(direct(port)) },
			func() error { return receive(size)(connectVia("tcp", relay, port)) })...)
	}
	link.report(b, "link", size)
	base.report(b, "base", size)
	b.ReportMetric(link.cpu.Seconds()/base.cpu.Seconds(), "x-cpu")
	b.ReportMetric(medianOf(ratios), "x-baseline")
}
