package netbroker

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// BenchmarkSOCKSSetup: connection setup (dial the proxy, open a tunnel
// to a loopback echo port, one byte there and back, close) through
// SOCKS5 (greeting, RFC 1929, CONNECT) beside the same through an HTTP
// CONNECT, interleaved in one run: p50 of each in µs and their ratio.
func BenchmarkSOCKSSetup(b *testing.B) {
	echo := echoBench(b)
	port := uint16(echo.Addr().(*net.TCPAddr).Port)
	rules, err := RulesFrom(&Grants{LocalhostPorts: []uint16{port}})
	if err != nil {
		b.Fatal(err)
	}
	p, err := New(Config{Rules: rules, Resolver: mapResolver{}, Own: ownList{}, Log: func(Event) {}, MaxConns: 4096, SOCKSSecret: socksSecret})
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

	viaSOCKS := func() error {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return err
		}
		defer c.Close()
		msg := []byte{5, 1, 2, 1, byte(len(SOCKSUser))}
		msg = append(append(msg, SOCKSUser...), byte(len(socksSecret)))
		msg = append(append(msg, socksSecret...), 5, 1, 0, 1, 127, 0, 0, 1, byte(port>>8), byte(port), 'x')
		if _, err := c.Write(msg); err != nil { // pipelined: every reply is read after
			return err
		}
		reply := make([]byte, 2+2+10+1)
		if _, err := io.ReadFull(c, reply); err != nil {
			return err
		}
		if reply[3] != 0 || reply[5] != 0 || reply[14] != 'x' {
			return fmt.Errorf("socks reply %v", reply)
		}
		return nil
	}
	viaConnect := func() error {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return err
		}
		defer c.Close()
		fmt.Fprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\nx", port)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			return fmt.Errorf("connect: %v", err)
		}
		if x, err := br.ReadByte(); err != nil || x != 'x' {
			return fmt.Errorf("connect echo: %v", err)
		}
		return nil
	}
	var socksT, connT []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := viaSOCKS(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := viaConnect(); err != nil {
			b.Fatal(err)
		}
		socksT, connT = append(socksT, t1.Sub(t0)), append(connT, time.Since(t1))
	}
	b.StopTimer()
	p50 := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2].Nanoseconds()) / 1e3
	}
	link, base := p50(socksT), p50(connT)
	b.ReportMetric(link, "link-socks-p50-µs")
	b.ReportMetric(base, "base-connect-p50-µs")
	b.ReportMetric(link/base, "x-baseline")
}
