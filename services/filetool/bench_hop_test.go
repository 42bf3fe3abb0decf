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
	report(b, p50(link), p50(base))
}
