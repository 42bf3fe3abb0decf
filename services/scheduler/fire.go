package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"lnk.dev/lnk/internal/conversation"
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
}

// Fire hands every job due at now, once each, and returns when the next
// one is due (zero: none). Recovery, for firings missed while the
// machine was off or the agent stopped (the spec is silent; docs/
// SCHEDULER.md): a one-off job past its time fires once, late, and
// says so; a recurring job's missed firings are one firing, late, and
// its next is its first time after now, never a burst. A firing the way
// in refused (its caps: hops, per_day) is dropped, logged: a one-off
// job is removed, a recurring one goes on to its next time. A job whose
// conversation the harness no longer keeps (deleted since) is refused
// there and removed, recurring or not, logged once with a hint. A firing the
// way in couldn't take (the harness starting) stays due, tried at the
// next Fire. A subagent's start, taken or refused, is kept as started
// (Task.Started) and fires no more; KeepStarted later it is removed.
func (r *Runner) Fire(ctx context.Context) (next time.Time, err error) {
	now := r.Now().UTC()
	jobs, err := r.Store.List()
	if err != nil {
		return time.Time{}, err
	}
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
		herr := r.Hand(ctx, m)
		if herr != nil {
			if _, refused := refusal.Of(herr); !refused {
				r.Logf("lnk: job %s stays due: %v", j.ID, herr)
				next = earliest(next, now.Add(time.Minute))
				continue
			}
			if errors.Is(herr, conversation.ErrMissing) && j.Task == nil {
				// Its conversation is gone: every firing would be refused
				// the same, so the job goes, said once, recurring or not.
				r.Logf("lnk: job %s's firing refused, the job removed: %v (hint: %s)", j.ID, herr, refusal.HintOf(herr))
				if err := r.Store.Remove(j.ID); err != nil {
					return time.Time{}, err
				}
				continue
			}
			r.Logf("lnk: job %s's firing refused, dropped: %v", j.ID, herr)
		}
		if j.Task != nil {
			j.Task.Started = now
			if err := r.Store.Write(j); err != nil {
				return time.Time{}, err
			}
			continue
		}
		if j.Cron == "" {
			if err := r.Store.Remove(j.ID); err != nil {
				return time.Time{}, err
			}
			continue
		}
		c, err := ParseCron(j.Cron)
		if err != nil {
			return time.Time{}, err
		}
		n, ok := c.Next(now, r.Zone)
		if !ok {
			r.Store.Remove(j.ID)
			continue
		}
		j.Last, j.Next = now, n.UTC()
		if err := r.Store.Write(j); err != nil {
			return time.Time{}, err
		}
		next = earliest(next, j.Next)
	}
	return next, nil
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
