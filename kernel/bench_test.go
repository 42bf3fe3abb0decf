package kernel_test

import (
	"context"
	"os"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/brokerproc"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
)

func p50(d []time.Duration) time.Duration {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

// BenchmarkRoundTrip: a no-op request from a client to the kernel and
// back (p50 and requests/s), beside a bare SOCK_SEQPACKET echo.
func BenchmarkRoundTrip(b *testing.B) {
	home := testenv.Home(b)
	runKernel(b, home)
	c, err := client.Connect(home)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		c.Ping(ctx)
	}
	// The baseline: a socketpair with an echo on the other end.
	pair, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	defer unix.Close(pair[0])
	go func() {
		defer unix.Close(pair[1])
		buf := make([]byte, 4096)
		for {
			n, err := unix.Read(pair[1], buf)
			if err != nil || n == 0 {
				return
			}
			unix.Write(pair[1], buf[:n])
		}
	}()
	msg := make([]byte, 22)
	buf := make([]byte, 4096)
	link := make([]time.Duration, 0, b.N)
	base := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := c.Ping(ctx); err != nil {
			b.Fatal(err)
		}
		link = append(link, time.Since(t0))
	}
	total := time.Since(start)
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		unix.Write(pair[0], msg)
		unix.Read(pair[0], buf)
		base = append(base, time.Since(t0))
	}
	// Throughput with four connections at once (the CLI and services).
	const conns = 4
	per := max(b.N/conns, 1)
	cls := make([]*client.Client, conns)
	for i := range cls {
		if cls[i], err = client.Connect(home); err != nil {
			b.Fatal(err)
		}
		defer cls[i].Close()
	}
	errs := make(chan error, conns)
	t0 := time.Now()
	for _, cl := range cls {
		go func() {
			for i := 0; i < per; i++ {
				if err := cl.Ping(ctx); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range cls {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(per*conns)/time.Since(t0).Seconds(), "req/s-4conns")
	l, bs := p50(link), p50(base)
	b.ReportMetric(float64(l.Nanoseconds()), "link-p50-ns")
	b.ReportMetric(float64(bs.Nanoseconds()), "base-p50-ns")
	b.ReportMetric(float64(l)/float64(bs), "x-baseline")
	b.ReportMetric(float64(b.N)/total.Seconds(), "req/s")
}

// BenchmarkCapLookup: a capability lookup in a table of 10 and of
// 100,000, beside a bare map lookup of the same keys.
func BenchmarkCapLookup(b *testing.B) {
	for _, n := range []int{10, 100000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			tb := kernel.NewCapTable()
			s := tb.Begin("main")
			hs := make([]kernel.Handle, n)
			bare := make(map[kernel.Handle]*kernel.Cap, n)
			for i := range hs {
				h, err := tb.Grant("main", s, "/x", kernel.RightRead, nil)
				if err != nil {
					b.Fatal(err)
				}
				hs[i] = h
				bare[h] = &kernel.Cap{Handle: h}
			}
			b.ResetTimer()
			t0 := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := tb.Lookup(hs[i%n], "main"); err != nil {
					b.Fatal(err)
				}
			}
			linkNs := float64(time.Since(t0).Nanoseconds()) / float64(b.N)
			b.StopTimer()
			t0 = time.Now()
			var hit int
			for i := 0; i < b.N; i++ {
				if bare[hs[i%n]] != nil {
					hit++
				}
			}
			baseNs := float64(time.Since(t0).Nanoseconds()) / float64(b.N)
			b.ReportMetric(linkNs, "link-ns/op")
			b.ReportMetric(baseNs, "base-ns/op")
			b.ReportMetric(linkNs/baseNs, "x-baseline")
		})
	}
}

// BenchmarkBrokerRestart: from kill -9 of a broker to its first answer
// through the kernel again, beside a bare spawn of the same broker to its
// first answer.
func BenchmarkBrokerRestart(b *testing.B) {
	home := testenv.Home(b)
	runKernel(b, home)
	c, err := client.Connect(home)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	fds := func() error {
		_, err := c.Call(ctx, proto.BrokerFDs, &proto.Empty{}, &proto.FDsReply{})
		return err
	}
	pid := func() int {
		st, err := c.Status(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return st.Brokers[0].PID
	}
	if err := fds(); err != nil {
		b.Fatal(err)
	}
	self, _ := os.Executable()
	var link, base []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := pid()
		for p == 0 {
			fds()
			p = pid()
		}
		t0 := time.Now()
		syscall.Kill(p, syscall.SIGKILL)
		for fds() != nil {
			time.Sleep(100 * time.Microsecond) // leave the cores to the restart
		}
		link = append(link, time.Since(t0))
		// The restart backoff grows for a broker that dies within 10 s
		// of its start; the benchmark measures the first restart only.
		b.StopTimer()
		time.Sleep(11 * time.Second)
		b.StartTimer()
		if i >= 2 {
			break
		}
	}
	b.StopTimer()
	for i := 0; i < len(link); i++ {
		null, _ := os.Open(os.DevNull)
		t0 := time.Now()
		pr, err := brokerproc.Start(brokerproc.Options{Path: self, Env: []string{"LNK_KERNEL_TEST_BROKER=1"}, Files: []*os.File{null}})
		if err != nil {
			b.Fatal(err)
		}
		cl, _ := wire.NewClient(pr.Chan)
		if _, err := cl.Call(ctx, proto.TestBrokerFDs, &proto.Empty{}, &proto.FDsReply{}); err != nil {
			b.Fatal(err)
		}
		base = append(base, time.Since(t0))
		cl.Close()
		pr.Kill()
		null.Close()
	}
	l, bs := p50(link), p50(base)
	b.ReportMetric(float64(l.Microseconds()), "link-restart-us")
	b.ReportMetric(float64(bs.Microseconds()), "base-spawn-us")
	b.ReportMetric(float64(l)/float64(bs), "x-baseline")
}
