package scheduler

import (
	"errors"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/refusal"
)

// Outcomes of a firing the way in did not take, by what its error is.
type outcome int

const (
	// final: a refusal by a rule (the harness's 403 or 404, the way in's
	// hops, the conversation gone): every later firing would be refused
	// the same, so the job ends.
	final outcome = iota + 1
	// dropped: refused past [tool.scheduler] per_day: this firing goes,
	// the job's next is tried (a one-off job ends).
	dropped
	// later: not taken for now (the harness not answering, starting or
	// busy, 503; the way in at its cap at once; what could not be read):
	// tried again after a wait that grows, said once a state.
	later
)

// classify is what the runner does with err from Hand. A refusal is
// final unless its rule says it is for now (refusal.ErrBusy) or past
// the day's cap (caps.ErrPerDay); an error that is no refusal (nothing
// answered, nothing could be read) is for now: what could not be
// learned is tried again, never taken as a refusal nor as taken.
func classify(err error) outcome {
	switch {
	case !refusal.Final(err):
		return later
	case errors.Is(err, caps.ErrPerDay):
		return dropped
	}
	return final
}

// The waits between a job's tries while its firing is not taken for
// now: firstRetry, doubled at each try, at most maxRetry, for as long as
// the job is kept (a recurring job's missed times are one firing, as
// ever). Each wait is kept with the job (Job.Retry, written under the
// schedule's lock), so a restart of the runner (the agent's) waits it
// out too, and doubles on from it.
const (
	firstRetry = time.Minute
	maxRetry   = time.Hour
)

// takeWait is how long a firing waits to be taken by the agent's way
// in (which returns once its harness has taken the message, 202 or
// queued, long before the turn ends) while the schedule's lock is held;
// one not taken by then is not taken for now (later).
var takeWait = 30 * time.Second

// retry is a job whose firing was not taken for now.
type retry struct {
	at    time.Time     // not tried again before
	wait  time.Duration // the wait after its last try
	why   string        // the state last said, its error's words
	tries int
}

// notTaken records job id's firing not taken for now at now, and says
// whether the log is told: at the first try and when why changes, never
// at each try. kept is the job's Retry as written, which a runner that
// knows nothing of the job yet (started since) goes on from, saying
// its state once again.
func (r *Runner) notTaken(id, why string, now time.Time, kept *Retry) (rt *retry, tell bool) {
	if r.retries == nil {
		r.retries = map[string]*retry{}
	}
	rt = r.retries[id]
	if rt == nil && kept != nil {
		rt = &retry{wait: time.Duration(kept.Wait) * time.Second, tries: kept.Tries}
		r.retries[id] = rt
	}
	if rt == nil {
		rt = &retry{wait: firstRetry}
		r.retries[id] = rt
		tell = true
	} else {
		rt.wait = min(2*rt.wait, maxRetry)
		tell = rt.why != why
	}
	rt.why, rt.tries = why, rt.tries+1
	rt.at = now.Add(rt.wait)
	return rt, tell
}

// kept is rt as the job keeps it.
func (rt *retry) kept() *Retry {
	return &Retry{At: rt.at, Wait: int(rt.wait / time.Second), Tries: rt.tries}
}

// waiting says until when job j waits before its next try (zero: it
// doesn't): as this runner knows, else as the job keeps it. A kept time
// past maxRetry from now (a clock set back, a file edited) is not
// waited for: the job is tried.
func (r *Runner) waiting(j *Job, now time.Time) time.Time {
	at := time.Time{}
	if rt := r.retries[j.ID]; rt != nil {
		at = rt.at
	} else if j.Retry != nil && !j.Retry.At.After(now.Add(maxRetry)) {
		at = j.Retry.At
	}
	if now.Before(at) {
		return at
	}
	return time.Time{}
}

// settled forgets job id's tries, and says how many there were.
func (r *Runner) settled(id string) int {
	rt := r.retries[id]
	if rt == nil {
		return 0
	}
	delete(r.retries, id)
	return rt.tries
}

// forgetGone forgets the tries of jobs no longer kept (cancelled).
func (r *Runner) forgetGone(jobs []*Job) {
	if len(r.retries) == 0 {
		return
	}
	kept := map[string]bool{}
	for _, j := range jobs {
		kept[j.ID] = true
	}
	for id := range r.retries {
		if !kept[id] {
			delete(r.retries, id)
		}
	}
}
