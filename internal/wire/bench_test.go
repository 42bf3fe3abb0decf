package wire

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkCallRoundTrip times one echo call through a Client and a
// Server in this process beside its floor, interleaved in the same run:
// a bare blocking sendmsg/recvmsg ping-pong of the same record between
// two threads of this process, with no table, no JSON and no matching.
// p50 of each; x-baseline is call/floor.
func BenchmarkCallRoundTrip(b *testing.B) {
	cl, _ := newTestClient(b, testRoutes(nil, nil))
	ctx := context.Background()
	req := &echoReq{Text: "hello"}
	var resp echoResp

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		buf := make([]byte, 512)
		for {
			n, _, _, _, err := unix.Recvmsg(fds[1], buf, nil, 0)
			if err != nil || n == 0 || unix.Sendmsg(fds[1], buf[:n], nil, nil, 0) != nil {
				return
			}
		}
	}()
	b.Cleanup(func() {
		unix.Shutdown(fds[0], unix.SHUT_RDWR)
		<-done
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
	rec, _ := AppendRecord(nil, Record{Kind: KindRequest, Type: 1, ID: 1, Body: []byte(`{"text":"hello"}`)})
	back := make([]byte, 512)

	call := make([]time.Duration, 0, b.N)
	floor := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := cl.Call(ctx, specEcho, req, &resp); err != nil {
			b.Fatal(err)
		}
		call = append(call, time.Since(t0))
		t0 = time.Now()
		if err := unix.Sendmsg(fds[0], rec, nil, nil, 0); err != nil {
			b.Fatal(err)
		}
		if _, _, _, _, err := unix.Recvmsg(fds[0], back, nil, 0); err != nil {
			b.Fatal(err)
		}
		floor = append(floor, time.Since(t0))
	}
	b.StopTimer()
	p, q := p50(call), p50(floor)
	b.ReportMetric(p, "call-p50-ns")
	b.ReportMetric(q, "floor-p50-ns")
	b.ReportMetric(p/q, "x-baseline")
	b.ReportMetric(0, "ns/op")
}

func p50(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2])
}
