package hub

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkCallThroughHub times one echo call through the hub against
// the same call on a session of its own (the server as a direct child on
// stdio), in the same run: p50 of each, and what the hub adds.
func BenchmarkCallThroughHub(b *testing.B) {
	r := newRig(b)
	r.run(time.Hour)
	hubConn := r.dial()
	hubConn.initialize(1)

	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-lnk-mark="+r.mark)
	cmd.Env = []string{"LNK_TEST_HUB_SERVER=1"}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	direct := &conn{t: b, c: nil, br: bufio.NewReaderSize(out, 1<<20)}
	directSend := func(format string, a ...any) { fmt.Fprintf(in, format+"\n", a...) }
	directSend(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	direct.next()
	directSend(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	var base, link []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		directSend(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, i+2)
		if _, err := direct.next(); err != nil {
			b.Fatal(err)
		}
		base = append(base, time.Since(start))
		start = time.Now()
		hubConn.call(i+2, "echo", "x")
		link = append(link, time.Since(start))
	}
	b.StopTimer()
	baseNs, linkNs := p50(base), p50(link)
	b.ReportMetric(linkNs, "link-ns/op")
	b.ReportMetric(baseNs, "base-ns/op")
	b.ReportMetric(linkNs/baseNs, "x-baseline")
	b.ReportMetric((linkNs-baseNs)/1e3, "added-us-p50")
}

func p50(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2])
}

// BenchmarkEightBridgesEightSessions keeps 8×8 sessions calling through
// one hub and reports goroutines and heap before the load and after it.
func BenchmarkEightBridgesEightSessions(b *testing.B) {
	r := newRig(b)
	r.run(time.Hour)
	conns := make([]*conn, 64)
	for i := range conns {
		conns[i] = r.dial()
		conns[i].initialize(1)
	}
	settle := func() (int, uint64) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return runtime.NumGoroutine(), m.HeapInuse
	}
	g0, h0 := settle()
	b.ResetTimer()
	var wg sync.WaitGroup
	per := max(b.N/len(conns), 1)
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				c.call(i+2, "echo", "x")
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	g1, h1 := settle()
	runtime.KeepAlive(conns)
	b.ReportMetric(float64(g0), "goroutines-before")
	b.ReportMetric(float64(g1), "goroutines-after")
	b.ReportMetric(float64(h0)/(1<<20), "heap-MiB-before")
	b.ReportMetric(float64(h1)/(1<<20), "heap-MiB-after")
}
