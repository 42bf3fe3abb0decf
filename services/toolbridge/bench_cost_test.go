package toolbridge

import (
	"os"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// A tools/call's cost in CPU and context switches, which move far less
// with the machine's load than its wall-clock time: batches of calls one
// way at a time (through the proxy's route and the bridge, to the
// bridge's socket alone, straight on stdio, and the client's transport to
// a stub that answers at once), each batch's CPU time (schedstat) and
// context switches read from every thread of this process (the client,
// the proxy and the bridge) and of the server that answered.
func BenchmarkToolsCallCost(b *testing.B) {
	for _, sv := range servers {
		b.Run("server="+sv.name, func(b *testing.B) {
			br := newBenchRoute(b, map[string]caps.Tool{"test": {Allow: []string{"echo"}}}, sv.tiny, Settings{})
			sid := br.session(b)
			d := newDirect(b, sv.tiny)
			stubSock, stubChannel := stubServer(b, br.proxy+".stub")
			stubChannel.Close()
			linkPid := br.r.Bridge.sessionPid(sid)
			ways := []struct {
				name string
				pid  int // the server's, 0 for the stub
				call func() (string, error)
			}{
				{"link", linkPid, br.caller(sid)},
				{"bridge", linkPid, (&benchRoute{proxy: br.r.Socket, route: br.route}).caller(sid)},
				{"base", d.cmd.Process.Pid, func() (string, error) { return d.call(echoCall) }},
				{"transport", 0, (&benchRoute{proxy: stubSock, route: br.route}).caller(sid)},
			}
			self := os.Getpid()
			sums := make([][2]usage, len(ways)) // this process, the server
			const batch = 64
			b.ResetTimer()
			for done := 0; done < b.N; done += batch {
				n := min(batch, b.N-done)
				for w, way := range ways {
					s0, v0 := usageOf(self), usageOf(way.pid)
					for range n {
						if body, err := way.call(); err != nil || !strings.Contains(body, `"id":7`) {
							b.Fatalf("%s: %v %s", way.name, err, body)
						}
					}
					s1, v1 := usageOf(self), usageOf(way.pid)
					sums[w][0] = sums[w][0].Plus(s1.Minus(s0))
					sums[w][1] = sums[w][1].Plus(v1.Minus(v0))
				}
			}
			per := func(v int64) float64 { return float64(v) / float64(b.N) }
			for w, way := range ways {
				b.ReportMetric(per(sums[w][0].CPUNS)/1e3, way.name+"-self-cpu-us")
				b.ReportMetric(per(sums[w][0].Switches), way.name+"-self-cs")
				if way.pid != 0 {
					b.ReportMetric(per(sums[w][1].CPUNS)/1e3, way.name+"-server-cpu-us")
					b.ReportMetric(per(sums[w][1].Switches), way.name+"-server-cs")
				}
			}
		})
	}
}

// sessionPid is the process id of session id's server (0 if none).
func (b *Bridge) sessionPid(id string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.sessions[id]; s != nil && s.srv.cmd != nil {
		return s.srv.cmd.Process.Pid
	}
	return 0
}

// usage is testenv.Usage: CPU time and context switches.
type usage = testenv.Usage

func usageOf(pid int) usage { return testenv.UsageOf(pid) }

// The tests' go-sdk server called straight on stdio with nothing else
// running, each call after an idle gap of the client's (busy, as a
// client's hop through the route is): the server's own CPU and context
// switches a call, and the call's p50. What a call through the route
// costs the server beyond the same call on stdio (link-server-cpu-us
// above base-server-cpu-us) is its runtime's, measured here without the
// bridge: Go parks and wakes its threads again (and its collector runs
// on) when its calls come further apart.
func BenchmarkDirectCallAfterAGap(b *testing.B) {
	for _, gap := range []time.Duration{0, 50 * time.Microsecond, 150 * time.Microsecond, 300 * time.Microsecond} {
		b.Run("gap="+gap.String(), func(b *testing.B) {
			d := newDirect(b, false)
			pid := d.cmd.Process.Pid
			var lat []time.Duration
			u0 := usageOf(pid)
			b.ResetTimer()
			for range b.N {
				for t0 := time.Now(); time.Since(t0) < gap; {
				}
				t1 := time.Now()
				if line, err := d.call(echoCall); err != nil || !strings.Contains(line, "bench") {
					b.Fatalf("%v %s", err, line)
				}
				lat = append(lat, time.Since(t1))
			}
			u := usageOf(pid).Minus(u0)
			b.ReportMetric(float64(u.CPUNS)/float64(b.N)/1e3, "server-cpu-us")
			b.ReportMetric(float64(u.Switches)/float64(b.N), "server-cs")
			b.ReportMetric(float64(p50(lat).Microseconds()), "p50-us")
		})
	}
}
