package procs

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The thresholds. A request its client just closed is still open here
// while it ends, so one client's requests in turn hold two.
const (
	WideAt      = 4
	NarrowAt    = 2
	NarrowAfter = 500 * time.Millisecond
)

// Adapter moves its process between one P and all of them by the
// requests open. A nil *Adapter does nothing.
type Adapter struct {
	all  int          // GOMAXPROCS as the process started
	open atomic.Int32 // requests open now
	peak atomic.Int32 // most open at once since the last look
	mu   sync.Mutex
	wide bool
}

// New narrows this process to one P and returns its Adapter, or returns
// nil where the process has one P to begin with.
func New() *Adapter {
	all := runtime.GOMAXPROCS(0)
	if all <= 1 {
		return nil
	}
	runtime.GOMAXPROCS(1)
	return &Adapter{all: all}
}

// Begin records one more request open, widening at WideAt.
func (a *Adapter) Begin() {
	if a == nil {
		return
	}
	n := a.open.Add(1)
	for {
		old := a.peak.Load()
		if n <= old || a.peak.CompareAndSwap(old, n) {
			break
		}
	}
	if n < WideAt {
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

// End records one request ended.
func (a *Adapter) End() {
	if a != nil {
		a.open.Add(-1)
	}
}

// Open is how many requests are open now.
func (a *Adapter) Open() int {
	if a == nil {
		return 0
	}
	return int(a.open.Load())
}

// narrowWhenQuiet looks every NarrowAfter and goes back to one P once a
// whole period had at most NarrowAt requests open at a time.
func (a *Adapter) narrowWhenQuiet() {
	a.peak.Store(a.open.Load())
	for {
		time.Sleep(NarrowAfter)
		if a.peak.Swap(a.open.Load()) > NarrowAt {
			continue
		}
		a.mu.Lock()
		a.wide = false
		runtime.GOMAXPROCS(1)
		a.mu.Unlock()
		return
	}
}
