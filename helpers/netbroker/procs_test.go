package netbroker

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// The adapter narrows its process to one P, widens it to every P once
// wideAt connections are open together, and narrows it again once a
// whole period had at most narrowAt open; a program that does not ask
// (Config.AdaptProcs unset) is never touched.
func TestProcsFollowOpenConnections(t *testing.T) {
	all := runtime.GOMAXPROCS(0)
	testenv.Require(t, all >= 2, "two CPUs or more (one has nothing to adapt)")
	defer runtime.GOMAXPROCS(all)
	if _, err := New(Config{Rules: &Rules{}}); err != nil || runtime.GOMAXPROCS(0) != all {
		t.Fatalf("a proxy that did not ask changed GOMAXPROCS to %d (%v)", runtime.GOMAXPROCS(0), err)
	}
	var open atomic.Int32
	a := newProcAdapter(func() int { return int(open.Load()) })
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS %d at the start, want 1", got)
	}
	for n := 1; n < wideAt; n++ {
		a.opened(n)
	}
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS %d with %d open, want 1", got, wideAt-1)
	}
	open.Store(wideAt)
	a.opened(wideAt)
	if got := runtime.GOMAXPROCS(0); got != all {
		t.Fatalf("GOMAXPROCS %d with %d open, want %d", got, wideAt, all)
	}
	// Still busy: it stays wide across a period.
	time.Sleep(narrowAfter + narrowAfter/2)
	if got := runtime.GOMAXPROCS(0); got != all {
		t.Fatalf("GOMAXPROCS %d while %d stay open, want %d", got, wideAt, all)
	}
	open.Store(1)
	deadline := time.Now().Add(10 * narrowAfter)
	for runtime.GOMAXPROCS(0) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("still %d Ps a while after the connections closed", runtime.GOMAXPROCS(0))
		}
		time.Sleep(narrowAfter / 10)
	}
}
