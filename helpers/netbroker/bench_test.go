package netbroker

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
)

// sinkServer reads each connection to its end, then answers one byte.
func sinkServer(b *testing.B) net.Listener {
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
				buf := make([]byte, 1<<20)
				for {
					if _, err := c.Read(buf); err != nil {
						break
					}
				}
				c.Write([]byte{1})
			}()
		}
	}()
	return ln
}

// benchProxy serves a proxy granting port, for benchmarks.
func benchProxy(b *testing.B, port uint16) string {
	rules, err := RulesFrom(&caps.Compiled{LocalhostPorts: []uint16{port}})
	if err != nil {
		b.Fatal(err)
	}
	p, err := New(Config{Rules: rules, Resolver: mapResolver{}, Own: map[netip.Addr]bool{}, Log: func(Event) {}, MaxConns: 4096})
	if err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(b.TempDir(), "p.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	go p.Serve(ln)
	b.Cleanup(func() { p.Close() })
	return sock
}

// viaProxy opens a CONNECT tunnel to 127.0.0.1:port.
func viaProxy(sock string, port uint16) (net.Conn, error) {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", port)
	resp, err := http.ReadResponse(bufio.NewReaderSize(c, 64), nil)
	if err != nil || resp.StatusCode != 200 {
		c.Close()
		return nil, fmt.Errorf("CONNECT: %v %v", resp, err)
	}
	return c, nil
}

func direct(port uint16) (net.Conn, error) {
	return net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
}

// transfer sends n bytes on c, half-closes, and waits for the answer.
func transfer(c net.Conn, buf []byte, n int) error {
	defer c.Close()
	for sent := 0; sent < n; sent += len(buf) {
		if _, err := c.Write(buf); err != nil {
			return err
		}
	}
	c.(interface{ CloseWrite() error }).CloseWrite()
	_, err := io.ReadFull(c, make([]byte, 1))
	return err
}

// BenchmarkTunnelThroughput: 256 MiB through a CONNECT tunnel beside the
// same transfer over direct loopback TCP, in the same run.
func BenchmarkTunnelThroughput(b *testing.B) {
	const size = 256 << 20
	ln := sinkServer(b)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	sock := benchProxy(b, port)
	buf := make([]byte, 1<<20)
	var linkNs, baseNs time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		c, err := direct(port)
		if err == nil {
			err = transfer(c, buf, size)
		}
		baseNs += time.Since(t0)
		t1 := time.Now()
		if err == nil {
			c, err = viaProxy(sock, port)
		}
		if err == nil {
			err = transfer(c, buf, size)
		}
		linkNs += time.Since(t1)
		if err != nil {
			b.Fatal(err)
		}
	}
	link, base := float64(linkNs)/float64(b.N), float64(baseNs)/float64(b.N)
	b.ReportMetric(size/link*1e9/(1<<20), "link-MiB/s")
	b.ReportMetric(size/base*1e9/(1<<20), "base-MiB/s")
	b.ReportMetric(base/link, "x-baseline") // throughput ratio: ≥ 0.9 is the target
}

// BenchmarkConnectSetup: p50 time to a first echoed byte through a fresh
// tunnel beside a fresh direct connection.
func BenchmarkConnectSetup(b *testing.B) {
	ln := echoBench(b)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	sock := benchProxy(b, port)
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
		if err := roundTrip(viaProxy(sock, port)); err != nil {
			b.Fatal(err)
		}
		base, link = append(base, t1.Sub(t0)), append(link, time.Since(t1))
	}
	l, d := median(link), median(base)
	b.ReportMetric(float64(l.Nanoseconds()), "link-ns/op")
	b.ReportMetric(float64(d.Nanoseconds()), "base-ns/op")
	b.ReportMetric(float64(l-d)/1e3, "added-µs-p50") // target ≤ 300
	b.ReportMetric(float64(l)/float64(d), "x-baseline")
}

// BenchmarkConnectsPerSecond: tunnels opened (and one byte echoed) a
// second from parallel clients, beside direct connections.
func BenchmarkConnectsPerSecond(b *testing.B) {
	ln := echoBench(b)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	sock := benchProxy(b, port)
	rate := func(dial func() (net.Conn, error)) float64 {
		var n atomic.Int64
		t0 := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			buf := make([]byte, 1)
			for pb.Next() {
				c, err := dial()
				if err != nil {
					b.Error(err)
					return
				}
				c.Write(buf)
				io.ReadFull(c, buf)
				c.Close()
				n.Add(1)
			}
		})
		return float64(n.Load()) / time.Since(t0).Seconds()
	}
	linkRate := rate(func() (net.Conn, error) { return viaProxy(sock, port) })
	baseRate := rate(func() (net.Conn, error) { return direct(port) })
	b.ReportMetric(linkRate, "link-connects/s") // target ≥ 5,000
	b.ReportMetric(baseRate, "base-connects/s")
	b.ReportMetric(linkRate/baseRate, "x-baseline")
}

func echoBench(b *testing.B) net.Listener {
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
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
