package netbroker

import (
	"net"
	"testing"
	"time"
)

// BenchmarkSmokescreenThroughput: 1 GiB through Link's CONNECT tunnel
// beside the same transfer through smokescreen's (loopback TCP, as it is
// deployed): four pairs in turns in one run, each way into Link (vias:
// its socket, and a TCP connection to the sandbox's relay, as a sandbox
// reaches it). Each proxy is a process of its own and writes its log
// line; CPU time counts both proxies' processes. x-baseline is the median pair's ratio of Link's MiB/s over
// smokescreen's: ≥ 1.0 is the target.
func BenchmarkSmokescreenThroughput(b *testing.B) {
	const size, pairs = 1 << 30, 4
	ln := sinkServer(b, size)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	ss, pid := smokescreen(b, port)
	for _, v := range vias {
		b.Run("via="+v.name, func(b *testing.B) {
			px := benchProxy(b, port)
			dial := v.dial(b, px, port)
			buf := make([]byte, 1<<20)
			link, smoke := measure{also: px.cpu}, measure{also: func() time.Duration { return childCPU(pid) }}
			var ratios []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ratios = append(ratios, inTurns(b, pairs, &smoke, &link,
					func() error { return transferVia(connectVia("tcp", ss, port))(buf, size) },
					func() error { return transferVia(dial())(buf, size) })...)
			}
			link.report(b, "link", size)
			smoke.report(b, "smokescreen", size)
			b.ReportMetric(link.cpu.Seconds()/smoke.cpu.Seconds(), "x-cpu")
			b.ReportMetric(medianOf(ratios), "x-baseline")
		})
	}
}

// BenchmarkSmokescreenConnects: tunnels opened (and one byte echoed) a
// second from parallel clients through Link beside smokescreen, in the
// same run, each way into Link (vias). x-baseline is Link's rate over
// smokescreen's: ≥ 1.0 is the target.
func BenchmarkSmokescreenConnects(b *testing.B) {
	ln := echoBench(b)
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	ss, pid := smokescreen(b, port)
	for _, v := range vias {
		b.Run("via="+v.name, func(b *testing.B) {
			px := benchProxy(b, port)
			dial := v.dial(b, px, port)
			link, smoke := measure{also: px.cpu}, measure{also: func() time.Duration { return childCPU(pid) }}
			var linkN, smokeN float64
			for i := 0; i < 2; i++ { // in turns, twice: the machine's load shifts
				linkN += connects(b, &link, dial)
				smokeN += connects(b, &smoke, func() (net.Conn, error) { return connectVia("tcp", ss, port) })
			}
			linkRate, smokeRate := linkN/link.wall.Seconds(), smokeN/smoke.wall.Seconds()
			b.ReportMetric(linkRate, "link-connects/s")
			b.ReportMetric(smokeRate, "smokescreen-connects/s")
			b.ReportMetric(float64(link.cpu.Microseconds())/linkN, "link-cpu-µs/connect")
			b.ReportMetric(float64(smoke.cpu.Microseconds())/smokeN, "smokescreen-cpu-µs/connect")
			b.ReportMetric(linkRate/smokeRate, "x-baseline")
		})
	}
}
