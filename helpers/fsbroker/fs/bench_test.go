package fs

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/brokerproc"
)

// BenchmarkReadThroughBroker times a 4 KiB read through the broker
// (request, fd back over SCM_RIGHTS, read, close) beside a direct
// open+read+close of the same file in this process, and beside two
// floors: a bare SOCK_SEQPACKET ping-pong that passes an fd back between
// two threads of this process, and the same with another process (what
// any broker costs at the least). Each figure is the p50 of the same run.
// Then, with this process on one P (GOMAXPROCS=1), bursts of link reads
// and of the cross-process floor alternate: link-ops/s-1p beside
// xproc-floor-ops/s-1p. link-ops/s is the interleaved pass's, on every P.
func BenchmarkReadThroughBroker(b *testing.B) {
	tr := newTree(b)
	c, _ := startBroker(b, tr)
	ctx := context.Background()
	data := make([]byte, 4096)
	path := filepath.Join(tr.home, "f")
	must(b, os.WriteFile(path, data, 0o600))
	buf := make([]byte, 8192)

	floor := newPingPong(b, path)
	xfloor := newPongProcess(b, path)
	link := make([]time.Duration, 0, b.N)
	xbare := make([]time.Duration, 0, b.N)
	base := make([]time.Duration, 0, b.N)
	bare := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	var linkTotal time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		f, _, err := c.Open(ctx, "home", "f", 0)
		if err != nil {
			b.Fatal(err)
		}
		if n, _ := f.Read(buf); n != 4096 {
			b.Fatalf("read %d bytes", n)
		}
		f.Close()
		d := time.Since(t0)
		link = append(link, d)
		linkTotal += d

		t0 = time.Now()
		g, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		g.Read(buf)
		g.Close()
		base = append(base, time.Since(t0))

		t0 = time.Now()
		floor.roundTrip(b)
		bare = append(bare, time.Since(t0))

		t0 = time.Now()
		xfloor.roundTrip(b)
		xbare = append(xbare, time.Since(t0))
	}
	_ = start
	// Throughput with this process on one P (GOMAXPROCS=1, the broker
	// as it runs): link reads back to back, then the cross-process floor
	// back to back, alternating in bursts so load falls on both alike.
	prev := runtime.GOMAXPROCS(1)
	var linkBurst, xBurst time.Duration
	for done := 0; done < b.N; done += 100 {
		t0 := time.Now()
		for range 100 {
			f, _, err := c.Open(ctx, "home", "f", 0)
			if err != nil {
				b.Fatal(err)
			}
			f.Read(buf)
			f.Close()
		}
		linkBurst += time.Since(t0)
		t0 = time.Now()
		for range 100 {
			xfloor.roundTrip(b)
		}
		xBurst += time.Since(t0)
	}
	runtime.GOMAXPROCS(prev)
	b.StopTimer()
	bursts := float64((b.N + 99) / 100 * 100)
	b.ReportMetric(bursts/linkBurst.Seconds(), "link-ops/s-1p")
	b.ReportMetric(bursts/xBurst.Seconds(), "xproc-floor-ops/s-1p")
	l, o, f, x := p50(link), p50(base), p50(bare), p50(xbare)
	b.ReportMetric(l, "link-p50-ns")
	b.ReportMetric(o, "base-p50-ns")
	b.ReportMetric(f, "floor-p50-ns")
	b.ReportMetric(x, "xproc-floor-p50-ns")
	b.ReportMetric(l/o, "x-baseline")
	b.ReportMetric(l/x, "x-xproc-floor")
	b.ReportMetric(float64(b.N)/linkTotal.Seconds(), "link-ops/s")
}

func p50(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2])
}

// pingPong is the floor: one thread answers each one-byte datagram with
// a datagram carrying a fresh dup of an open file's fd.
type pingPong struct{ a, b int }

func newPingPong(tb testing.TB, path string) *pingPong {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	p := &pingPong{a: fds[0], b: fds[1]}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer f.Close()
		one := make([]byte, 1)
		rights := unix.UnixRights(int(f.Fd()))
		for {
			n, _, _, _, err := unix.Recvmsg(p.b, one, nil, 0)
			if err != nil || n == 0 {
				return
			}
			if unix.Sendmsg(p.b, one, rights, nil, 0) != nil {
				return
			}
		}
	}()
	tb.Cleanup(func() {
		unix.Shutdown(p.a, unix.SHUT_RDWR)
		<-done
		unix.Close(p.a)
		unix.Close(p.b)
	})
	return p
}

func (p *pingPong) roundTrip(tb testing.TB) {
	one := []byte{1}
	oob := make([]byte, unix.CmsgSpace(4))
	if err := unix.Sendmsg(p.a, one, nil, nil, 0); err != nil {
		tb.Fatal(err)
	}
	_, oobn, _, _, err := unix.Recvmsg(p.a, one, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		tb.Fatal(err)
	}
	msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
	for _, m := range msgs {
		fds, _ := unix.ParseUnixRights(&m)
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
}

const pongMarker = "LNK_FS_TEST_PONG"

// pong is the other process of the cross-process floor: on fd 3 it
// answers each datagram with one carrying the fd of path.
func pong(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 2
	}
	rights := unix.UnixRights(int(f.Fd()))
	one := make([]byte, 1)
	for {
		n, _, _, _, err := unix.Recvmsg(3, one, nil, 0)
		if err != nil || n == 0 {
			return 0
		}
		if unix.Sendmsg(3, one, rights, nil, 0) != nil {
			return 0
		}
	}
}

func newPongProcess(tb testing.TB, path string) *pingPong {
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := brokerproc.Start(brokerproc.Options{Path: exe, Env: []string{pongMarker + "=" + path}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		p.Kill()
		p.Chan.Close()
	})
	return &pingPong{a: int(p.Chan.Fd())}
}
