package agentlife

import (
	"context"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/runtool"
	"lnk.dev/lnk/services/scheduler"
	"lnk.dev/lnk/services/wayin"
)

// openWayIn opens agent a's way in (services/wayin: ~/.lnk/agents/
// <agent>/wayin.sock, 0600, with a fresh way-in key) and serves it for
// the supervisor's life: messages from the agent's schedules, subagents,
// background commands and webhooks reach Link Harness through it alone.
// Only Link Harness is handed them: it says who a message is from and
// narrows a conversation's tools. stop ends it and removes its key.
func (s *supervisor) openWayIn(ctx context.Context, a *caps.Agent) (stop func(), err error) {
	// The way in says what it refuses from its own goroutines: each line
	// goes to Stderr and to the log as the supervisor's own (say: through
	// the running start's bounded writer, or appendLine's).
	logf := func(f string, args ...any) { s.say(f, args...) }
	w, err := wayin.Open(s.cfg.Home, a, logf)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(wctx); err != nil {
			logf("lnk: agent %s's way in stopped: %v", a.Name, err)
		}
	}()
	// The agent's jobs fire from here, through the way in (the
	// scheduler's server, confined to writing them, fires nothing).
	st, err := scheduler.OpenStore(s.cfg.Home, a.Name)
	if err != nil {
		cancel()
		<-done
		w.Close()
		return nil, err
	}
	fired := make(chan struct{})
	go func() {
		defer close(fired)
		r := &scheduler.Runner{Store: st, Zone: time.Local, Now: time.Now, Logf: logf,
			Hand: func(ctx context.Context, m scheduler.Message) error {
				wm := wayin.Message{From: m.From, Thread: m.Thread, Text: m.Text, Hops: m.Hops}
				if m.Task != nil {
					wm.Task = &wayin.Task{Parent: m.Parent, Tools: m.Task.Tools, Model: m.Task.Model}
				}
				_, err := w.Hand(ctx, wm)
				return err
			}}
		r.Run(wctx, schedulePoll)
	}()
	// Endings recorded while the agent was stopped, or whose delivery
	// was cut short, are handed once its harness answers.
	delivered := make(chan struct{})
	go func() {
		defer close(delivered)
		s.deliverEndings(wctx, a, logf)
	}()
	return func() {
		cancel()
		<-done
		<-delivered
		<-fired
		st.Close()
		w.Close()
	}, nil
}

// endingsFor bounds how long the endings pending at a start are tried,
// every endingsEvery: the harness starts in its sandbox meanwhile.
const (
	// schedulePoll is how often the jobs are read again for one the
	// scheduler's server added.
	schedulePoll = 10 * time.Second
	endingsFor   = 2 * time.Minute
	endingsEvery = 2 * time.Second
)

// deliverEndings hands the background commands' endings still untold to
// the way in, trying again until the harness takes them or ctx ends.
func (s *supervisor) deliverEndings(ctx context.Context, a *caps.Agent, logf func(string, ...any)) {
	ra, err := runtool.LoadAgent(s.cfg.Home, a.Name, s.cfg.Lnk)
	if err != nil {
		logf("lnk: agent %s: the background commands' endings stay to be told: %v", a.Name, err)
		return
	}
	var last error
	for end := time.Now().Add(endingsFor); time.Now().Before(end); {
		if last = ra.DeliverToWayIn(ctx); last == nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(endingsEvery):
		}
	}
	logf("lnk: agent %s: the background commands' endings stay to be told: %v", a.Name, last)
}
