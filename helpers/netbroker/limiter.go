package netbroker

import (
	"sync"
	"time"
)

// limiter is [internet] per_minute: a token bucket holding a minute's
// worth, refilled evenly. A nil limiter allows everything.
type limiter struct {
	mu     sync.Mutex
	now    func() time.Time
	rate   float64 // tokens a second
	max    float64
	tokens float64
	last   time.Time
}

func newLimiter(perMinute int, now func() time.Time) *limiter {
	if perMinute <= 0 {
		return nil
	}
	return &limiter{now: now, rate: float64(perMinute) / 60, max: float64(perMinute), tokens: float64(perMinute), last: now()}
}

// allow takes a token if one is left.
func (l *limiter) allow() bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.now()
	if d := t.Sub(l.last).Seconds(); d > 0 {
		l.tokens = min(l.max, l.tokens+d*l.rate)
	}
	l.last = t
	if l.tokens < 1 {
		return false
	}
	l.tokens--
	return true
}
