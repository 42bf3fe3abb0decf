package web

import (
	"runtime/debug"
	"testing"
)

// TestSetCollector: SetCollector sets lnk-web's collector settings and
// its restore puts back the ones it found.
func TestSetCollector(t *testing.T) {
	pct, limit := debug.SetGCPercent(150), debug.SetMemoryLimit(1<<40)
	defer func() { debug.SetGCPercent(pct); debug.SetMemoryLimit(limit) }()
	restore := SetCollector()
	if got := debug.SetGCPercent(GCPercent); got != GCPercent {
		t.Errorf("GOGC %d, want %d", got, GCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != MemoryLimit {
		t.Errorf("memory limit %d, want %d", got, MemoryLimit)
	}
	restore()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("GOGC restored to %d, want 150", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("memory limit restored to %d", got)
	}
}
