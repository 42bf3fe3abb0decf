package procs

import (
	"runtime"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// An Adapter narrows its process to one P, widens it to every P once
// WideAt requests are open together, stays wide while they stay open,
// and narrows again once a whole period had at most NarrowAt open.
func TestAdapterFollowsOpenRequests(t *testing.T) {
	all := runtime.GOMAXPROCS(0)
	testenv.Require(t, all >= 2, "two CPUs or more (one has nothing to adapt)")
	defer runtime.GOMAXPROCS(all)
	a := New()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS %d at the start, want 1", got)
	}
	for range WideAt - 1 {
		a.Begin()
	}
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS %d with %d open, want 1", got, WideAt-1)
	}
	a.Begin()
	if got := runtime.GOMAXPROCS(0); got != all {
		t.Fatalf("GOMAXPROCS %d with %d open, want %d", got, WideAt, all)
	}
	time.Sleep(NarrowAfter + NarrowAfter/2)
	if got := runtime.GOMAXPROCS(0); got != all {
		t.Fatalf("GOMAXPROCS %d while %d stay open, want %d", got, WideAt, all)
	}
	for range WideAt - 1 {
		a.End()
	}
	if a.Open() != 1 {
		t.Fatalf("%d open, want 1", a.Open())
	}
	deadline := time.Now().Add(10 * NarrowAfter)
	for runtime.GOMAXPROCS(0) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("still %d Ps a while after the requests ended", runtime.GOMAXPROCS(0))
		}
		time.Sleep(NarrowAfter / 10)
	}
}

// A nil Adapter, which New returns on one CPU, does nothing.
func TestNilAdapter(t *testing.T) {
	var a *Adapter
	a.Begin()
	a.End()
	if a.Open() != 0 {
		t.Fatal("a nil Adapter counts")
	}
}
