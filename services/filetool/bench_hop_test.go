package filetool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"lnk.dev/lnk/services/filetool"
)

// BenchmarkSandboxedHop times one call's hop from serve to the sandboxed
// apply and back (no MCP), against os.ReadFile, to split the read's cost.
// It counts the sandbox's processes (this process's descendants: lnk
// sandbox run's and apply) with their CPU time and context switches a call
// (sandbox-…): apply's share, which moves far less with the machine's load
// than wall-clock time.
func BenchmarkSandboxedHop(b *testing.B) {
	files, command := benchSession(b)
	sb := &filetool.Sandboxed{Argv: command}
	b.Cleanup(func() { sb.Close() })
	args := json.RawMessage(`{"path":"4k.txt"}`)
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		if _, err := sb.Call(ctx, "read", args); err != nil {
			b.Fatal(err)
		}
	}
	pids := descendants(os.Getpid())
	before := usages(pids)
	var link, base []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := sb.Call(ctx, "read", args); err != nil {
			b.Fatal(err)
		}
		link = append(link, time.Since(start))
		start = time.Now()
		if _, err := os.ReadFile(filepath.Join(files, "4k.txt")); err != nil {
			b.Fatal(err)
		}
		base = append(base, time.Since(start))
	}
	b.StopTimer()
	after := usages(pids)
	report(b, p50(link), p50(base))
	b.ReportMetric(float64(len(pids)), "sandbox-procs")
	b.ReportMetric(float64(after.CPUNS-before.CPUNS)/float64(b.N), "sandbox-cpu-ns/op")
	b.ReportMetric(float64(after.Switches-before.Switches)/float64(b.N), "sandbox-switches/op")
}
