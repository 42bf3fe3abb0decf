package netbroker

import (
	"runtime"
	"testing"
)

// A proxy that does not ask (Config.AdaptProcs unset) never touches
// GOMAXPROCS; one that does runs on one P (internal/procs).
func TestProxyAdaptsProcsOnlyWhenAsked(t *testing.T) {
	all := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(all)
	if _, err := New(Config{Rules: &Rules{}}); err != nil || runtime.GOMAXPROCS(0) != all {
		t.Fatalf("a proxy that did not ask changed GOMAXPROCS to %d (%v)", runtime.GOMAXPROCS(0), err)
	}
	if _, err := New(Config{Rules: &Rules{}, AdaptProcs: true}); err != nil || runtime.GOMAXPROCS(0) != 1 {
		t.Fatalf("a proxy that asked runs on %d Ps (%v), want 1", runtime.GOMAXPROCS(0), err)
	}
}
