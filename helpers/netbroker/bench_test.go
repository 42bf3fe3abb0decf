package netbroker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/connpass"
	"lnk.dev/lnk/internal/testenv"
)

// sinkServer reads size bytes from each connection (or to its end),
// then answers one byte. It never waits for a half-close, which not
// every proxy passes on.
func sinkServer(b *testing.B, size int64) net.Listener {
	return serveEach(b, func(c net.Conn) {
		buf := make([]byte, 1<<20)
		for got := int64(0); got < size; {
			n, err := c.Read(buf)
			got += int64(n)
			if err != nil {
				break
			}
		}
		c.Write([]byte{1})
	})
}

// serveEach listens on a loopback port until the benchmark ends and
// hands each connection to handle on a goroutine of its own, closing it
// when handle returns.
func serveEach(b *testing.B, handle func(net.Conn)) net.Listener {
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
			go func() { defer c.Close(); handle(c) }()
		}
	}()
	return ln
}

// benchProxy starts the proxy as lnk sandbox run does: the real
// lnk-netbroker in a process of its own, confined (landlock, seccomp),
// granting port on [localhost], with a relay channel (--relay-fd) on
// which a sandbox's listener may be handed; its log, a line per
// connection, read from its stderr as lnk reads it.
func benchProxy(b *testing.B, port uint16) *benchProc {
	home := testenv.Home(b)
	grants, err := json.Marshal(Grants{LocalhostPorts: []uint16{port}})
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	logR, logW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	relayR, relayW, err := connpass.Pair()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(testenv.Bin(b, "lnk-netbroker"), "--home", home, "--relay-fd", "3")
	cmd.Stdin = bytes.NewReader(grants)
	cmd.Stdout, cmd.Stderr = outW, logW
	cmd.ExtraFiles = []*os.File{relayR}
	err = cmd.Start()
	outW.Close()
	logW.Close()
	relayR.Close()
	if err != nil {
		b.Fatal(err)
	}
	go io.Copy(io.Discard, logR)
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		outR.Close()
		logR.Close()
		relayW.Close()
	})
	line, err := bufio.NewReader(outR).ReadString('\n') // its socket; then what a sandbox is told
	if err != nil {
		b.Fatalf("lnk-netbroker printed no socket: %v", err)
	}
	pid := cmd.Process.Pid
	return &benchProc{sock: strings.TrimSpace(line), relay: relayW, cpu: func() time.Duration { return childCPU(pid) }}
}

// benchProc is a running lnk-netbroker: its socket, the sending end of
// its relay channel, and the CPU time its process has used so far (for
// a measure's also).
type benchProc struct {
	sock  string
	relay *os.File
	cpu   func() time.Duration
}

// viaProxy opens a CONNECT tunnel to 127.0.0.1:port.
func viaProxy(sock string, port uint16) (net.Conn, error) {
	return connectVia("unix", sock, port)
}

func direct(port uint16) (net.Conn, error) {
	return net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
}

// transfer sends n bytes on c and waits for the answer.
func transfer(c net.Conn, buf []byte, n int) error {
	defer c.Close()
	for sent := 0; sent < n; sent += len(buf) {
		if _, err := c.Write(buf); err != nil {
			return err
		}
	}
	_, err := io.ReadFull(c, make([]byte, 1))
	return err
}

// BenchmarkTunnelThroughput: 1 GiB through a CONNECT tunnel beside the
// same transfer over direct loopback TCP, in the same run: four pairs in
// turns (base, link, link, base, …) so a shift in the machine's load
// falls on both. x-baseline is the median pair's throughput ratio. The
// process's CPU time (client, proxy and server all live in it) is
// reported beside the wall clock: on a shared machine it is the steadier
// figure. Each way in (vias): the proxy's socket, and the sandbox's relay.
func BenchmarkTunnelThroughput(b *testing.B) {
	const size, pairs = 1 << 30, 4
	ln := sinkServer(b, size)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	for _, v := range vias {
		b.Run("via="+v.name, func(b *testing.B) {
			px := benchProxy(b, port)
			dial := v.dial(b, px, port)
			buf := make([]byte, 1<<20)
			link, base := measure{also: px.cpu}, measure{}
			var ratios []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ratios = append(ratios, inTurns(b, pairs, &base, &link,
					func() error { return transferVia(direct(port))(buf, size) },
					func() error { return transferVia(dial())(buf, size) })...)
			}
			link.report(b, "link", size)
			base.report(b, "base", size)
			b.ReportMetric(link.cpu.Seconds()/base.cpu.Seconds(), "x-cpu")
			b.ReportMetric(medianOf(ratios), "x-baseline") // throughput ratio: ≥ 0.9 is the target
		})
	}
}

// BenchmarkConnectSetup: p50 time to a first echoed byte through a fresh
// tunnel beside a fresh direct connection, each way in (vias).
func BenchmarkConnectSetup(b *testing.B) {
	ln := echoBench(b)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
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
	for _, v := range vias {
		b.Run("via="+v.name, func(b *testing.B) {
			px := benchProxy(b, port)
			dial := v.dial(b, px, port)
			var link, base []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := roundTrip(direct(port)); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := roundTrip(dial()); err != nil {
					b.Fatal(err)
				}
				base, link = append(base, t1.Sub(t0)), append(link, time.Since(t1))
			}
			l, d := median(link), median(base)
			b.ReportMetric(float64(l.Nanoseconds()), "link-ns/op")
			b.ReportMetric(float64(d.Nanoseconds()), "base-ns/op")
			b.ReportMetric(float64(l-d)/1e3, "added-µs-p50") // target ≤ 300
			b.ReportMetric(float64(l)/float64(d), "x-baseline")
		})
	}
}

// BenchmarkConnectsPerSecond: tunnels opened (and one byte echoed) a
// second from parallel clients, beside direct connections, each way in
// (vias).
func BenchmarkConnectsPerSecond(b *testing.B) {
	ln := echoBench(b)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	for _, v := range vias {
		b.Run("via="+v.name, func(b *testing.B) {
			px := benchProxy(b, port)
			dial := v.dial(b, px, port)
			link, base := measure{also: px.cpu}, measure{}
			var linkN, baseN float64
			for i := 0; i < 2; i++ { // in turns, twice: the machine's load shifts
				linkN += connects(b, &link, dial)
				baseN += connects(b, &base, func() (net.Conn, error) { return direct(port) })
			}
			linkRate, baseRate := linkN/link.wall.Seconds(), baseN/base.wall.Seconds()
			b.ReportMetric(linkRate, "link-connects/s") // target ≥ 5,000
			b.ReportMetric(baseRate, "base-connects/s")
			// CPU a connection (client, proxy and server together): the
			// figure that holds on a busy machine; 2 cores give 2e6 / it
			// a second.
			b.ReportMetric(float64(link.cpu.Microseconds())/linkN, "link-cpu-µs/connect")
			b.ReportMetric(float64(base.cpu.Microseconds())/baseN, "base-cpu-µs/connect")
			b.ReportMetric(float64(runtime.NumCPU())*1e6*linkN/float64(link.cpu.Microseconds()), "link-connects/s-cpu-bound")
			b.ReportMetric(linkRate/baseRate, "x-baseline")
		})
	}
}

func echoBench(b *testing.B) net.Listener {
	return serveEach(b, func(c net.Conn) { io.Copy(c, c) })
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
