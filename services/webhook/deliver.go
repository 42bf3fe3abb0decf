package webhook

import (
	"context"
	"fmt"
	"sync"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/wayin"
)

// Deliverer hands a message to the agent's harness. It returns once the
// harness has taken the message (never waiting for the turn to end), or
// with an error when the harness refused it or could not be reached.
type Deliverer interface {
	Deliver(ctx context.Context, agentID, from, thread, text string) error
}

// From is who a webhook's post is from, as the harness's Link-From
// names a stranger.
func From(hook string) string { return wayin.FromWebhook + hook }

// Thread is the conversation a webhook's posts go to: its own.
func Thread(hook string) string { return "webhook:" + hook }

// WayIn delivers through the agent's way in (services/wayin), the one
// gate every message from others passes (its peer rule and proof, hops,
// caps, Link-From, a stranger's own conversation): each post a message
// from the webhook's stranger at hop 0, proved with the agent's way-in
// key, answered once the harness took it; its answer goes nowhere. The
// listener never holds the harness's endpoint or its key.
type WayIn struct {
	a Agent

	mu     sync.Mutex
	caller *wayin.Caller // read from the way-in key at need; dropped on a failure
}

// WayInOf is the Deliverer to agent a's way in.
func WayInOf(a Agent) *WayIn { return &WayIn{a: a} }

// Deliver implements Deliverer. A failure forgets the way-in key it
// read, so a supervisor started again since (with a fresh key) is
// reached at the next post.
func (w *WayIn) Deliver(ctx context.Context, agentID, from, thread, text string) error {
	if agentID != w.a.ID {
		return fmt.Errorf("a post for agent %s handed to agent %s's way in", agentID, w.a.ID)
	}
	w.mu.Lock()
	c := w.caller
	if c == nil {
		var err error
		c, err = wayin.CallerFor(w.a.Home, &caps.Agent{Name: w.a.Name, ID: w.a.ID, Owner: w.a.Owner})
		if err != nil {
			w.mu.Unlock()
			return err
		}
		w.caller = c
	}
	w.mu.Unlock()
	if _, err := c.Send(ctx, wayin.Message{From: from, Thread: thread, Text: text}); err != nil {
		w.mu.Lock()
		if w.caller == c {
			w.caller = nil
		}
		w.mu.Unlock()
		return err
	}
	return nil
}
