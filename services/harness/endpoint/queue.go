package endpoint

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"lnk.dev/lnk/internal/textsafe"
)

// queueable says whether m may wait in its thread's inbox: a message
// from others, not a subagent's start (its answer is read by the way
// in) nor a sender who speaks once (run:<id>: its Taken check reads the
// thread, which needs the thread's turn).
func (a *agentState) queueable(m Message) bool {
	return a.Queue != nil && m.From != "" && m.Subagent == nil && !strings.HasPrefix(m.From, "run:")
}

// tryThread takes thread's turn if it is free and no queued message
// waits for it (a message run now would pass those), without waiting.
func (a *agentState) tryThread(thread string) (func(), bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.waiting[thread] > 0 {
		return nil, false
	}
	ch, ok := a.threads[thread]
	if !ok {
		ch = make(chan struct{}, 1)
		a.threads[thread] = ch
	}
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, true
	default:
		return nil, false
	}
}

// queue keeps m in its thread's inbox and starts what runs it after the
// turns before it; false when refused (answered 503, logged once).
func (s *Server) queue(w http.ResponseWriter, r *http.Request, a *agentState, m Message) bool {
	a.mu.Lock()
	a.waiting[m.Thread]++ // before the write: a runner never sees more on the disk than here
	a.mu.Unlock()
	if err := a.Queue(m); err != nil {
		a.ran(m.Thread)
		s.refuse(w, r, http.StatusServiceUnavailable, "the message can't wait in thread "+m.Thread+"'s inbox, so it is not taken: "+textsafe.Line(err.Error()))
		return false
	}
	s.queued.Add(1)
	go s.runQueued(a, m.Thread)
	return true
}

// ran counts one queued message of thread as run.
func (a *agentState) ran(thread string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.waiting[thread]--; a.waiting[thread] <= 0 {
		delete(a.waiting, thread)
	}
}

// runQueued waits for thread's turn and runs its queued messages. Every
// queueing starts one: one that finds none left has nothing to do.
func (s *Server) runQueued(a *agentState, thread string) {
	defer s.queued.Done()
	release, err := a.takeThread(s.ctx, thread)
	if err != nil {
		return // stopping: what waits is run at the next start
	}
	defer release()
	a.RunQueued(s.ctx, thread, func() { a.ran(thread) })
}

// Start is what Serve needs first: ctx, which ends the queued turns run
// after it, and a run of every thread's messages left queued by an
// earlier start.
func (s *Server) Start(ctx context.Context) error {
	s.ctx = ctx
	var errs []error
	for _, a := range s.agents {
		if a.Waiting == nil || a.RunQueued == nil {
			continue
		}
		w, err := a.Waiting()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		a.mu.Lock()
		for t, n := range w {
			a.waiting[t] += n
		}
		a.mu.Unlock()
		for t := range w {
			s.queued.Add(1)
			go s.runQueued(a, t)
		}
	}
	return errors.Join(errs...)
}

// Wait waits for the runs of queued messages to stop, once Start's ctx
// has ended: what the agent's turns use may be closed after it.
func (s *Server) Wait() { s.queued.Wait() }
