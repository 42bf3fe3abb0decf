package scheduler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"lnk.dev/lnk/internal/refusal"
)

// Message is a firing as the way in takes it.
type Message struct {
	From, Thread, Text string
	Hops               int
	// Task is a subagent's start's tools and model (From and Thread are
	// then both task-<id>); Parent the conversation its answer goes to.
	Task   *Task
	Parent string
}

// Hand hands a firing to the agent's way in (wayin.Server.Hand in the
// agent's supervisor); it returns once the harness took it.
type Hand func(ctx context.Context, m Message) error

// Runner fires an agent's due jobs through its way in.
type Runner struct {
	Store *Store
	Hand  Hand
	Zone  *time.Location
	Now   func() time.Time
	Logf  func(format string, args ...any)

	// retries are the jobs whose firing was not taken for now; Fire is
	// called from one goroutine at a time (Run's).
	retries map[string]*retry
}

// Fire hands every job due at now, once each, and returns when the next
// one is due (zero: none). Recovery, for firings missed while the
// machine was off or the agent stopped (the spec is silent; docs/
// SCHEDULER.md): a one-off job past its time fires once, late, and
// says so; a recurring job's missed firings are one firing, late, and
// its next is its first time after now, never a burst.
//
// A firing not taken is decided by its class (classify), each said once
// in the agent's log: refused by a rule (the harness's 403 or 404, its
// conversation deleted since, the way in's hops), the job is removed,
// recurring or not, with the refusal's hint; refused past per_day, that
// firing is dropped (a one-off job is removed, a recurring one goes on
// to its next time); not taken for now (the harness not answering,
// starting or busy, the way in at its cap), the job stays due and is
// tried again after firstRetry, then twice as long each time up to
// maxRetry, said at its first try and when why changes, and once taken.
// A subagent's start, taken or refused, is kept as started
// (Task.Started) and fires no more; KeepStarted later it is removed.
func (r *Runner) Fire(ctx context.Context) (next time.Time, err error) {
	now := r.Now().UTC()
	jobs, err := r.Store.List()
	if err != nil {
		return time.Time{}, err
	}
	r.forgetGone(jobs)
	for _, j := range jobs {
		if j.started() {
			// The record of a subagent's parent, kept a while, fires no more.
			if now.Sub(j.Task.Started) > KeepStarted {
				if err := r.Store.Remove(j.ID); err != nil {
					return time.Time{}, err
				}
			}
			continue
		}
		if j.Next.After(now) {
			next = earliest(next, j.Next)
			continue
		}
		if at := r.waiting(j, now); !at.IsZero() {
			next = earliest(next, at)
			continue
		}
		n, stopping, err := r.fireLocked(ctx, j.ID, now)
		if err != nil {
			return time.Time{}, err
		}
		if !n.IsZero() {
			next = earliest(next, n)
		}
		if stopping {
			return next, nil // stopping: what is due fires at the next start
		}
	}
	return next, nil
}

// fireLocked fires job id, due at now, holding the schedule's lock from
// its reading again to its writing back (or removal): a job removed
// since the list (cancelled, its conversation deleted) is not fired,
// and one removed while it fires is never written back. It returns the
// job's next time (zero: none, or removed), and whether ctx ended.
func (r *Runner) fireLocked(ctx context.Context, id string, now time.Time) (next time.Time, stopping bool, err error) {
	unlock, err := r.Store.Lock()
	if err != nil {
		return time.Time{}, false, err
	}
	defer unlock()
	j, err := r.Store.read(id)
	if errors.Is(err, os.ErrNotExist) {
		r.settled(id)
		return time.Time{}, false, nil // removed meanwhile
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("job %s: %w", id, err)
	}
	if j.started() || j.Next.After(now) {
		return time.Time{}, false, nil // the list's next look says when
	}
	text := j.Text
	m := Message{From: "schedule:" + j.ID, Thread: j.Thread, Hops: j.Hops}
	if j.Task != nil {
		// A subagent's task, in its own conversation, its answer back
		// to the one that started it.
		m = Message{From: Subagent(j.ID), Thread: Subagent(j.ID), Hops: j.Hops, Task: j.Task, Parent: j.Thread}
	} else if late := now.Sub(j.Next); late >= time.Minute {
		text = fmt.Sprintf("(late by %s: this firing was due at %s, while the agent wasn't running)\n%s",
			late.Truncate(time.Minute), j.Next.In(r.Zone).Format("2006-01-02 15:04 MST"), j.Text)
	}
	m.Text = text
	// The lock is held while the firing waits to be taken: a harness
	// that never takes it must not hold the model's cancel and the
	// owner's delete with it. Once taken, the hand returns; past
	// takeWait untaken it is ended, not taken, and tried again later.
	hctx, stopHand := context.WithTimeout(ctx, takeWait)
	herr := r.Hand(hctx, m)
	stopHand()
	if herr != nil && ctx.Err() != nil {
		return time.Time{}, true, nil
	}
	if herr != nil {
		switch classify(herr) {
		case later:
			rt, tell := r.notTaken(j.ID, herr.Error(), now, j.Retry)
			if tell {
				r.Logf("lnk: job %s's firing not taken for now, tried again in %s, then less often (at most every %s), said again when that changes: %v", j.ID, rt.wait, maxRetry, herr)
			}
			// Kept with the job, so a restart waits it out too.
			j.Retry = rt.kept()
			return rt.at, false, r.Store.Write(j)
		case final:
			r.settled(j.ID)
			if j.Task == nil {
				// Every firing would be refused the same (its
				// conversation gone, a rule): the job goes, said once,
				// recurring or not.
				r.Logf("lnk: job %s's firing refused, the job removed: %v%s", j.ID, herr, hintOf(herr))
				return time.Time{}, false, r.Store.Remove(j.ID)
			}
			r.Logf("lnk: job %s's firing refused, the subagent's start ends: %v%s", j.ID, herr, hintOf(herr))
		case dropped:
			r.settled(j.ID)
			r.Logf("lnk: job %s's firing refused, dropped: %v%s", j.ID, herr, hintOf(herr))
		}
	} else if tries := r.settled(j.ID); tries > 0 {
		r.Logf("lnk: job %s's firing taken, after %d tries not taken", j.ID, tries)
	}
	j.Retry = nil // settled: taken, dropped, or a start ended
	if j.Task != nil {
		j.Task.Started = now
		return time.Time{}, false, r.Store.Write(j)
	}
	if j.Cron == "" {
		return time.Time{}, false, r.Store.Remove(j.ID)
	}
	c, err := ParseCron(j.Cron)
	if err != nil {
		return time.Time{}, false, err
	}
	n, ok := c.Next(now, r.Zone)
	if !ok {
		return time.Time{}, false, r.Store.Remove(j.ID)
	}
	j.Last, j.Next = now, n.UTC()
	if err := r.Store.Write(j); err != nil {
		return time.Time{}, false, err
	}
	return j.Next, false, nil
}

// hintOf is " (hint: ...)" for a refusal with a hint, else "".
func hintOf(err error) string {
	if h := refusal.HintOf(err); h != "" {
		return " (hint: " + h + ")"
	}
	return ""
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// Run fires due jobs until ctx ends: at each job's time, and at least
// every poll (a job the scheduler's server added meanwhile).
func (r *Runner) Run(ctx context.Context, poll time.Duration) {
	for {
		next, err := r.Fire(ctx)
		if err != nil {
			r.Logf("lnk: the schedule can't be read: %v", err)
		}
		wait := poll
		if !next.IsZero() {
			wait = min(wait, max(time.Until(next), time.Second))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
