package fs

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkReadThroughBroker times a 4 KiB read through the broker,
// fs.Client.Read (request, fd back over SCM_RIGHTS, read to the end,
// close), against a direct os.ReadFile of the same file in this process
// (open, fstat, read to the end, close), and against the
// floors of floor_test.go: a SOCK_SEQPACKET ping-pong that passes an fd
// back from a thread of this process, and the same from another process
// (what any broker costs at the least). Every figure comes from the same
// run, in alternating bursts of 100 of each, so the machine's load falls
// on all alike and each is timed as a caller making many reads meets it.
//
// Two passes:
//
//	all cores  link-p50-ns, base-p50-ns, floor-p50-ns, xproc-floor-p50-ns;
//	           x-baseline = link/base (target ≤ 3), x-xproc-floor.
//	           Beside them, the same four interleaved op by op (each
//	           read follows a round trip to two other peers, three
//	           processes waking each other in turn):
//	           link-interleaved-p50-ns and x-baseline-interleaved, which
//	           show what that costs a read through the broker on a
//	           machine whose idle CPUs halt
//	one core   this process, a broker and a floor process all on one
//	           CPU (every thread; the two started pinned), each with
//	           two Ps:
//	           bursts of 100 link reads, 100 floor round trips and 100
//	           direct reads alternate. link-ops/s-1core (target ≥ 50,000)
//	           beside xproc-floor-ops/s-1core and base-ops/s-1core, and
//	           the p50s of that pass (link-1core-p50-ns, …).
func BenchmarkReadThroughBroker(b *testing.B) {
	tr := newTree(b)
	c, _ := startBroker(b, tr)
	ctx := context.Background()
	path := filepath.Join(tr.home, "f")
	must(b, os.WriteFile(path, make([]byte, 4096), 0o600))
	floor := newPingPong(b, path)
	xfloor, _ := newPongProcess(b, path)

	linkRead := func() {
		d, err := c.Read(ctx, "home", "f")
		if err != nil || len(d) != 4096 {
			b.Fatalf("read %d bytes: %v", len(d), err)
		}
	}
	baseRead := func() {
		d, err := os.ReadFile(path)
		if err != nil || len(d) != 4096 {
			b.Fatalf("read %d bytes: %v", len(d), err)
		}
	}
	ways := []func(){linkRead, baseRead, func() { floor.roundTrip(b) }, func() { xfloor.roundTrip(b) }}
	all := make([][]time.Duration, len(ways))
	mixed := make([][]time.Duration, len(ways))
	one := make([][]time.Duration, len(ways))
	b.ResetTimer()
	for done := 0; done < b.N; done += 100 {
		for w, op := range ways {
			for range 100 {
				t0 := time.Now()
				op()
				all[w] = append(all[w], time.Since(t0))
			}
		}
	}
	for i := 0; i < b.N; i++ {
		for w, op := range ways {
			t0 := time.Now()
			op()
			mixed[w] = append(mixed[w], time.Since(t0))
		}
	}

	// One core: everything pinned, bursts alternating. The in-process
	// floor is left out: its two threads on one P would measure the
	// scheduler, not the socket. A broker and a floor process are
	// started again, pinned from birth as on a one-CPU machine, so each
	// runtime sizes itself for one CPU. This process keeps two Ps (as
	// the broker and the floor process do): with one, the runtime takes
	// its P from the thread blocked in recvmsg, and both figures would
	// measure that hand-off.
	cpu := lastCPU(b)
	runtime.LockOSThread()
	prev := runtime.GOMAXPROCS(2)
	unpin := pin(b, os.Getpid(), cpu)
	c, _ = startBroker(b, tr)
	xfloor, _ = newPongProcess(b, path)
	burst := make([]time.Duration, len(ways))
	oneCore := []int{0, 3, 1}
	for done := 0; done < b.N; done += 100 {
		for _, w := range oneCore {
			t0 := time.Now()
			for range 100 {
				t1 := time.Now()
				ways[w]()
				one[w] = append(one[w], time.Since(t1))
			}
			burst[w] += time.Since(t0)
		}
	}
	unpin()
	runtime.GOMAXPROCS(prev)
	runtime.UnlockOSThread()
	b.StopTimer()

	n := float64(len(one[0]))
	b.ReportMetric(n/burst[0].Seconds(), "link-ops/s-1core")
	b.ReportMetric(n/burst[3].Seconds(), "xproc-floor-ops/s-1core")
	b.ReportMetric(n/burst[1].Seconds(), "base-ops/s-1core")
	b.ReportMetric(p50(one[0]), "link-1core-p50-ns")
	b.ReportMetric(p50(one[3]), "xproc-floor-1core-p50-ns")
	b.ReportMetric(p50(one[1]), "base-1core-p50-ns")
	l, o, f, x := p50(all[0]), p50(all[1]), p50(all[2]), p50(all[3])
	b.ReportMetric(l, "link-p50-ns")
	b.ReportMetric(o, "base-p50-ns")
	b.ReportMetric(f, "floor-p50-ns")
	b.ReportMetric(x, "xproc-floor-p50-ns")
	b.ReportMetric(l/o, "x-baseline")
	b.ReportMetric(l/x, "x-xproc-floor")
	b.ReportMetric(p50(mixed[0]), "link-interleaved-p50-ns")
	b.ReportMetric(p50(mixed[0])/p50(mixed[1]), "x-baseline-interleaved")
	b.ReportMetric(p50(one[0])/p50(one[3]), "x-xproc-floor-1core")
	b.ReportMetric(0, "ns/op") // the figures above are the ones to read
}

func p50(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2])
}
