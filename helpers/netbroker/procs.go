package netbroker

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A proxy serving one connection at a time runs best on one P: each
// wake (a connection accepted, a byte to relay) is then taken by the
// thread the poller woke, not handed to a second one. Serving many at
// once, one P is the bottleneck. So the proxy runs on one P, takes every
// core once wideAt connections are open together, and goes back to one
// after narrowAfter with at most narrowAt open (a connection its client
// just closed is still open here while its tunnel ends, so one client's
// connections in turn hold two). runtime.GOMAXPROCS stops the world
// briefly: it is called at most once each way per narrowAfter. Only
// lnk-netbroker's own process adapts (Config.AdaptProcs), never a
// program that embeds a Proxy.
//
// Measured with lnk-netbroker on 2 cores, the sandbox's path, in turns,
// four rounds (BenchmarkConnectSetup, BenchmarkConnectsPerSecond): a
// CONNECT's setup added 289-403 µs p50 on two Ps, 216-266 on one,
// 173-298 adapting; CONNECTs a second 5,522-6,994 on two, 4,879-6,419
// on one, 5,683-7,341 adapting.
const (
	wideAt      = 4
	narrowAt    = 2
	narrowAfter = 500 * time.Millisecond
)

// procAdapter moves its process between one P and all of them.
type procAdapter struct {
	all  int          // GOMAXPROCS as the process started
	peak atomic.Int32 // most connections open at once since the last look
	mu   sync.Mutex
	wide bool
	open func() int // connections open now
}

// newProcAdapter narrows the process to one P, or returns nil where it
// has only one to begin with.
func newProcAdapter(open func() int) *procAdapter {
	all := runtime.GOMAXPROCS(0)
	if all <= 1 {
		return nil
	}
	runtime.GOMAXPROCS(1)
	return &procAdapter{all: all, open: open}
}

// opened records that n connections are open, widening at wideAt.
func (a *procAdapter) opened(n int) {
	for {
		old := a.peak.Load()
		if int32(n) <= old || a.peak.CompareAndSwap(old, int32(n)) {
			break
		}
	}
	if n < wideAt {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.wide {
		a.wide = true
		runtime.GOMAXPROCS(a.all)
		go a.narrowWhenQuiet()
	}
}

// narrowWhenQuiet looks every narrowAfter and goes back to one P once a
// whole period had at most narrowAt connections open at a time.
func (a *procAdapter) narrowWhenQuiet() {
	a.peak.Store(int32(a.open()))
	for {
		time.Sleep(narrowAfter)
		if a.peak.Swap(int32(a.open())) > narrowAt {
			continue
		}
		a.mu.Lock()
		a.wide = false
		runtime.GOMAXPROCS(1)
		a.mu.Unlock()
		return
	}
}
