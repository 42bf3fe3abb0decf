package wire

import (
	"context"
	"slices"
	"testing"
	"time"
)

// BenchmarkCallRoundTrip times one echo call through a Client and a
// Server in this process, waiting in the runtime's poller (what the
// package does), beside the same call on conns that wait in a blocking
// recvmsg (what it did first), interleaved in the same run; p50 of each.
func BenchmarkCallRoundTrip(b *testing.B) {
	cl, _ := newTestClient(b, testRoutes(nil, nil))
	waitInSyscall = true
	blk, _ := newTestClient(b, testRoutes(nil, nil))
	waitInSyscall = false
	ctx := context.Background()
	req := &echoReq{Text: "hello"}
	var resp echoResp
	poll := make([]time.Duration, 0, b.N)
	block := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := cl.Call(ctx, specEcho, req, &resp); err != nil {
			b.Fatal(err)
		}
		poll = append(poll, time.Since(t0))
		t0 = time.Now()
		if _, err := blk.Call(ctx, specEcho, req, &resp); err != nil {
			b.Fatal(err)
		}
		block = append(block, time.Since(t0))
	}
	b.StopTimer()
	p, q := p50(poll), p50(block)
	b.ReportMetric(p, "poller-p50-ns")
	b.ReportMetric(q, "blocking-p50-ns")
	b.ReportMetric(p/q, "x-blocking")
}

func p50(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2])
}
