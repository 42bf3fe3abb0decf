package netbroker

import (
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkSmokescreenThroughput: 1 GiB through Link's CONNECT tunnel
// (its unix socket, as a sandbox reaches it) beside the same transfer
// through smokescreen's (loopback TCP, as it is deployed), in turns in
// one run. Both format their log line; CPU time counts smokescreen's
// process too. x-baseline is Link's MiB/s over smokescreen's: ≥ 1.0 is
// the target.
func BenchmarkSmokescreenThroughput(b *testing.B) {
	const size = 1 << 30
	ln := sinkServer(b, size)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	ss, pid := smokescreen(b, port)
	sock := loggingProxy(b, port)
	buf := make([]byte, 1<<20)
	link, smoke := measure{}, measure{also: func() time.Duration { return childCPU(pid) }}
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runs := []func() error{
			func() error {
				return link.run(func() error { return transferVia(connectVia("unix", sock, port))(buf, size) })
			},
			func() error {
				return smoke.run(func() error { return transferVia(connectVia("tcp", ss, port))(buf, size) })
			},
		}
		if i%2 == 1 {
			runs[0], runs[1] = runs[1], runs[0]
		}
		for _, run := range runs {
			if err := run(); err != nil {
				b.Fatal(err)
			}
		}
	}
	link.report(b, "link", size)
	smoke.report(b, "smokescreen", size)
	b.ReportMetric(link.cpu.Seconds()/smoke.cpu.Seconds(), "x-cpu")
	b.ReportMetric(smoke.wall.Seconds()/link.wall.Seconds(), "x-baseline")
}

// BenchmarkSmokescreenConnects: tunnels opened (and one byte echoed) a
// second from parallel clients through Link beside smokescreen, in the
// same run. x-baseline is Link's rate over smokescreen's: ≥ 1.0 is the
// target.
func BenchmarkSmokescreenConnects(b *testing.B) {
	ln := echoBench(b)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	ss, _ := smokescreen(b, port)
	sock := loggingProxy(b, port)
	rate := func(network, addr string) float64 {
		var n atomic.Int64
		t0 := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			buf := []byte{1}
			for pb.Next() {
				c, err := connectVia(network, addr, port)
				if err != nil {
					b.Error(err)
					return
				}
				c.Write(buf)
				c.Read(buf)
				c.Close()
				n.Add(1)
			}
		})
		return float64(n.Load()) / time.Since(t0).Seconds()
	}
	var linkRate, smokeRate float64
	for i := 0; i < 2; i++ { // in turns, twice: the machine's load shifts
		linkRate += rate("unix", sock)
		smokeRate += rate("tcp", ss)
	}
	b.ReportMetric(linkRate/2, "link-connects/s")
	b.ReportMetric(smokeRate/2, "smokescreen-connects/s")
	b.ReportMetric(linkRate/smokeRate, "x-baseline")
}
