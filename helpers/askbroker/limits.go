package askbroker

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// Refusals at once, before anyone is asked. Each is a *Refusal wrapping
// one of these, so a caller tells them apart with errors.Is.
var (
	ErrNoWay   = errors.New("no way to ask the owner: no dialog, and no terminal or chat answering")
	ErrTooMany = errors.New("too many questions from this sandbox waiting at once")
	ErrTooFast = errors.New("too many questions from this sandbox in the last minute")
	ErrPaused  = errors.New("this sandbox's questions are paused after too many refusals")
)

// A Refusal is a question refused at once, with why.
type Refusal struct {
	Sandbox string
	Err     error
	Detail  string
}

func (r *Refusal) Error() string {
	if r.Detail != "" {
		return fmt.Sprintf("sandbox %s: %v (%s)", r.Sandbox, r.Err, r.Detail)
	}
	return fmt.Sprintf("sandbox %s: %v", r.Sandbox, r.Err)
}
func (r *Refusal) Unwrap() error { return r.Err }

// Rule marks a refusal as a rule's, for the CLI's exit code.
func (r *Refusal) Rule() string { return "ask" }

// Limits are what one sandbox may ask. The zero value takes the defaults.
type Limits struct {
	Waiting     int           // questions waiting at once (4)
	PerMinute   int           // questions asked in any minute (20)
	PauseAfter  int           // refusals within PauseWindow that pause it (10)
	PauseWindow time.Duration // (5 minutes)
	PauseFor    time.Duration // how long a pause lasts (5 minutes)
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defd := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.Waiting, 4)
	def(&l.PerMinute, 20)
	def(&l.PauseAfter, 10)
	defd(&l.PauseWindow, 5*time.Minute)
	defd(&l.PauseFor, 5*time.Minute)
	return l
}

// limiter keeps each sandbox's counts.
type limiter struct {
	l Limits

	mu sync.Mutex
	by map[string]*sandboxCounts
}

type sandboxCounts struct {
	waiting     int
	asked       []time.Time // in the last minute
	refused     []time.Time // in the last PauseWindow
	pausedUntil time.Time
}

func newLimiter(l Limits) *limiter {
	return &limiter{l: l.withDefaults(), by: map[string]*sandboxCounts{}}
}

func trim(ts []time.Time, since time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(since) {
		i++
	}
	return ts[i:]
}

// admit lets a question from sandbox in, or says why not.
func (lm *limiter) admit(sandbox string, now time.Time) error {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	c := lm.by[sandbox]
	if c == nil {
		c = &sandboxCounts{}
		lm.by[sandbox] = c
	}
	if now.Before(c.pausedUntil) {
		return &Refusal{sandbox, ErrPaused, "until " + c.pausedUntil.UTC().Format(time.RFC3339)}
	}
	if c.waiting >= lm.l.Waiting {
		return &Refusal{sandbox, ErrTooMany, fmt.Sprintf("at most %d", lm.l.Waiting)}
	}
	c.asked = trim(c.asked, now.Add(-time.Minute))
	if len(c.asked) >= lm.l.PerMinute {
		return &Refusal{sandbox, ErrTooFast, fmt.Sprintf("at most %d a minute", lm.l.PerMinute)}
	}
	c.asked = append(c.asked, now)
	c.waiting++
	return nil
}

// done ends an admitted question; refused counts it toward a pause. It
// reports a pause that starts now, for the log.
func (lm *limiter) done(sandbox string, refused bool, now time.Time) (pausedUntil time.Time) {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	c := lm.by[sandbox]
	c.waiting--
	if !refused {
		return time.Time{}
	}
	return lm.refusedLocked(c, now)
}

// refused counts one refusal toward sandbox's pause.
func (lm *limiter) refused(sandbox string, now time.Time) (pausedUntil time.Time) {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	c := lm.by[sandbox]
	if c == nil {
		c = &sandboxCounts{}
		lm.by[sandbox] = c
	}
	return lm.refusedLocked(c, now)
}

func (lm *limiter) refusedLocked(c *sandboxCounts, now time.Time) (pausedUntil time.Time) {
	if now.Before(c.pausedUntil) {
		return time.Time{} // already paused: a pause is not lengthened
	}
	c.refused = append(trim(c.refused, now.Add(-lm.l.PauseWindow)), now)
	if len(c.refused) >= lm.l.PauseAfter {
		c.refused = nil
		c.pausedUntil = now.Add(lm.l.PauseFor)
		return c.pausedUntil
	}
	return time.Time{}
}
