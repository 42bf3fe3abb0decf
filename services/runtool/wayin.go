package runtool

import (
	"context"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/wayin"
)

// deliverWait bounds one delivery of the endings pending.
const deliverWait = time.Minute

// DeliverToWayIn hands the agent's endings not yet told to its way in
// (services/wayin), each as a message from run:<id>, proved with the
// agent's way-in key. With the agent not running, they stay to be
// handed at its next start (its supervisor calls this as its way in
// opens), and the error says so.
func (a *Agent) DeliverToWayIn(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, deliverWait)
	defer cancel()
	ag, err := caps.LoadAgent(a.Home, a.Name)
	if err != nil {
		return err
	}
	var caller *wayin.Caller
	return a.DeliverEndings(ctx, func(ctx context.Context, e Ending, text string) (bool, error) {
		if caller == nil {
			if caller, err = wayin.CallerFor(a.Home, ag); err != nil {
				return false, err
			}
		}
		return caller.Send(ctx, wayin.Message{From: e.From, Thread: e.Thread, Text: text, Hops: e.Hops})
	})
}
