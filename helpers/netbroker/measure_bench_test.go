package netbroker

import (
	"io"
	"net"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// measure sums the wall clock and this process's CPU time (user and
// system) over runs, so a benchmark can put a transfer beside its
// baseline in both.
type measure struct {
	wall, cpu time.Duration
	n         int
	// also adds another process's CPU time (smokescreen's) if set.
	also func() time.Duration
}

func (m *measure) cpuNow() time.Duration {
	if m.also != nil {
		return cpuTime() + m.also()
	}
	return cpuTime()
}

func (m *measure) run(f func() error) error {
	c0, t0 := m.cpuNow(), time.Now()
	err := f()
	m.wall += time.Since(t0)
	m.cpu += m.cpuNow() - c0
	m.n++
	return err
}

// report puts name's MiB/s (of size bytes a run) and CPU ms a GiB.
func (m *measure) report(b *testing.B, name string, size int64) {
	if m.n == 0 {
		return
	}
	bytes := float64(size) * float64(m.n)
	b.ReportMetric(bytes/m.wall.Seconds()/(1<<20), name+"-MiB/s")
	b.ReportMetric(float64(m.cpu.Milliseconds())/(bytes/(1<<30)), name+"-cpu-ms/GiB")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// transferVia sends n bytes through a freshly dialed c (see transfer).
func transferVia(c net.Conn, err error) func(buf []byte, n int) error {
	return func(buf []byte, n int) error {
		if err != nil {
			return err
		}
		return transfer(c, buf, n)
	}
}

func medianOf(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// inTurns runs base and link pairs times each in turns (base, link,
// link, base, …), so a shift in the machine's load falls on both, and
// returns each pair's throughput ratio (link over base).
func inTurns(b *testing.B, pairs int, base, link *measure, runBase, runLink func() error) []float64 {
	var ratios []float64
	for i := 0; i < pairs; i++ {
		l0, b0 := link.wall, base.wall
		runs := []func() error{func() error { return base.run(runBase) }, func() error { return link.run(runLink) }}
		if i%2 == 1 {
			runs[0], runs[1] = runs[1], runs[0]
		}
		for _, run := range runs {
			if err := run(); err != nil {
				b.Fatal(err)
			}
		}
		ratios = append(ratios, float64(base.wall-b0)/float64(link.wall-l0))
	}
	return ratios
}

// connects opens max(b.N, 3000) tunnels, each echoing one byte, from
// 4×GOMAXPROCS clients at once (so the proxy, not the clients' round
// trips, is what waits), timed by m, and returns how many it
// opened. The floor keeps a short benchmark run from measuring little
// but its start.
func connects(b *testing.B, m *measure, dial func() (net.Conn, error)) float64 {
	var left, done atomic.Int64
	left.Store(int64(max(b.N, 3000)))
	m.run(func() error {
		var wg sync.WaitGroup
		for range 4 * runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 1)
				for left.Add(-1) >= 0 {
					c, err := dial()
					if err != nil {
						b.Error(err)
						return
					}
					c.Write(buf)
					io.ReadFull(c, buf)
					c.Close()
					done.Add(1)
				}
			}()
		}
		wg.Wait()
		return nil
	})
	return float64(done.Load())
}
