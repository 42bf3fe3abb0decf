package serve

import (
	"context"
	"errors"

	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/store"
)

// queue keeps m in its conversation's inbox with everything checked at
// its arrival, the tools its sender may have among them, so that
// nothing about it changes when it runs.
func (a *Agent) queue(m endpoint.Message) error {
	_, err := a.chats.Queue(m.Thread, store.Queued{From: m.From, Hops: m.Hops, Tools: toolsFor(m.From, a.cfg.Strangers), Text: m.Text})
	if err != nil {
		a.logf("lnk-harness: agent %s: thread %s: a message from %s not queued: %v", a.cfg.Name, m.Thread, m.From, err)
	}
	return err
}

// runQueued runs thread's queued messages in order, each once: a
// message's event carries its inbox number, and its done mark is on the
// disk before the next runs. One whose event is in the conversation
// already (a harness stopped between the turn and the mark) is marked,
// not run again. Each turn runs at most a message from others' limit
// (a.turnLimit), as one taken at once does. A turn that failed, or
// passed its limit, is marked too (its failure logged, as the endpoint
// logs any turn's), and the next runs; one cut by the harness stopping
// is left for the next start.
func (a *Agent) runQueued(ctx context.Context, thread string, ran func()) {
	defer a.ran.prune(thread, func() ([]store.Queued, error) { return a.chats.Pending(thread) })
	pending, err := a.chats.Pending(thread)
	if err != nil {
		a.logf("lnk-harness: agent %s: thread %s's inbox can't be read, so nothing in it runs: %v", a.cfg.Name, thread, err)
		return
	}
	for _, q := range pending {
		if ctx.Err() != nil {
			return
		}
		done, err := a.queuedRan(thread, q.ID)
		if err != nil {
			a.logf("lnk-harness: agent %s: thread %s: whether queued message %d ran can't be read, so it waits: %v", a.cfg.Name, thread, q.ID, err)
			return
		}
		if !done {
			tctx, cancel := context.WithTimeout(ctx, a.turnLimit)
			_, err = a.turn(tctx, endpoint.Message{Thread: thread, Text: q.Text, From: q.From, Hops: q.Hops}, q.Tools, q.ID, nil)
			over := errors.Is(tctx.Err(), context.DeadlineExceeded)
			cancel()
			switch {
			case err != nil && ctx.Err() != nil:
				return
			case err != nil && over:
				a.logf("lnk-harness: agent %s: thread %s: the turn of queued message %d from %s failed: %s: %v", a.cfg.Name, thread, q.ID, q.From, endpoint.TurnPastLimit(a.turnLimit), err)
			case err != nil:
				a.logf("lnk-harness: agent %s: thread %s: the turn of queued message %d from %s failed: %v", a.cfg.Name, thread, q.ID, q.From, err)
			}
		}
		if err := a.chats.Done(thread, q.ID); err != nil {
			a.logf("lnk-harness: agent %s: thread %s: queued message %d ran but its mark can't be kept: %v", a.cfg.Name, thread, q.ID, err)
			return
		}
		ran()
	}
}

// queuedRan says whether thread's conversation holds queued message id's
// event already, reading only what was written since its last look
// (ranIndex).
func (a *Agent) queuedRan(thread string, id int64) (bool, error) {
	conv, err := a.chats.Open(thread, a.storeOptions())
	if err != nil {
		return false, err
	}
	defer conv.Close()
	return a.ran.holds(conv, thread, id)
}

// waiting is each conversation's count of queued messages not yet run;
// one whose inbox can't be read counts as one waiting.
func (a *Agent) waiting() (map[string]int, error) {
	threads, err := a.chats.List()
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, t := range threads {
		p, err := a.chats.Pending(t)
		if err != nil {
			// Counted as waiting, so no message runs ahead of what it may
			// hold: each one for it tries the inbox, and is refused.
			a.logf("lnk-harness: agent %s: thread %s's inbox can't be read, so no message from others is taken there: %v", a.cfg.Name, t, err)
			out[t] = 1
			continue
		}
		if len(p) > 0 {
			out[t] = len(p)
		}
	}
	return out, nil
}
