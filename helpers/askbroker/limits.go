package askbroker

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"lnk.dev/lnk/internal/refusal"
)

// Refusals at once, before anyone is asked. Each is a *Refusal wrapping
// one of these, so a caller tells them apart with errors.Is.
var (
	ErrNoWay   = errors.New("no way to ask the owner: no dialog, and no terminal or chat answering")
	ErrTooMany = errors.New("too many questions from this sandbox waiting at once")
	ErrTooFast = errors.New("too many questions from this sandbox in the last minute")
	ErrPaused  = errors.New("this sandbox's questions are paused after too many refusals")
)

// A Refusal is a question refused at once, with why (Link's one
// refusal shape, internal/refusal): its Err is one of the errors above,
// its Rule "ask" (a rule's refusal, for the CLI's exit code).
type Refusal = refusal.Refusal

// refusedAtOnce is why's refusal of a question from sandbox; detail, if
// not "", says more.
func refusedAtOnce(sandbox string, why error, detail string) *Refusal {
	reason := fmt.Sprintf("sandbox %s: %v", sandbox, why)
	if detail != "" {
		reason += " (" + detail + ")"
	}
	return &Refusal{Reason: reason, Rule: "ask", Err: why}
}

// RefusedAtOnce reports whether err is a question refused at once,
// before anyone was asked (no way to ask, too many, too fast, paused).
func RefusedAtOnce(err error) bool {
	return errors.Is(err, ErrNoWay) || errors.Is(err, ErrTooMany) || errors.Is(err, ErrTooFast) || errors.Is(err, ErrPaused)
}

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
		return refusedAtOnce(sandbox, ErrPaused, "until "+c.pausedUntil.UTC().Format(time.RFC3339))
	}
	if c.waiting >= lm.l.Waiting {
		return refusedAtOnce(sandbox, ErrTooMany, fmt.Sprintf("at most %d", lm.l.Waiting))
	}
	c.asked = trim(c.asked, now.Add(-time.Minute))
	if len(c.asked) >= lm.l.PerMinute {
		return refusedAtOnce(sandbox, ErrTooFast, fmt.Sprintf("at most %d a minute", lm.l.PerMinute))
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
