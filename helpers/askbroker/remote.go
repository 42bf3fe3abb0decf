package askbroker

import (
	"context"
	"fmt"

	"lnk.dev/lnk/internal/wire"
)

// Remote asks through a broker in another process (cmd/lnk-askbroker)
// over its channel: the same questions, answers and refusals as
// [Broker.Ask] and [Broker.CountRefusal] give in process.
type Remote struct{ C *wire.Client }

// Ask puts q to the broker and waits for its decision. When ctx ends
// first (the call that asked was cancelled), the question is withdrawn
// from every way it was asked, and the broker's refusal is returned. A
// question refused at once returns a *Refusal, as [Broker.Ask] does.
func (r *Remote) Ask(ctx context.Context, q *Question) (Decision, error) {
	ref := newID()
	req := &AskRequest{What: q.What, Sandbox: q.Sandbox, Agent: q.Agent, Call: q.Call, Allow: q.Allow, Ref: ref}
	type res struct {
		rep Reply
		err error
	}
	done := make(chan res, 1)
	go func() {
		var rep Reply
		_, err := r.C.Call(context.Background(), AskSpec, req, &rep)
		done <- res{rep, err}
	}()
	var got res
	select {
	case got = <-done:
	case <-ctx.Done():
		var e Empty
		r.C.Call(context.Background(), WithdrawAskSpec, &WithdrawRef{Ref: ref}, &e)
		got = <-done
	}
	if got.err != nil {
		return Decision{Reason: "the ask broker failed: " + got.err.Error()}, fmt.Errorf("the ask broker (lnk-askbroker): %w", got.err)
	}
	rep := got.rep
	d := Decision{ID: rep.ID, Allow: rep.Allow, By: rep.By, Reason: rep.Reason}
	var why error
	switch rep.Refused {
	case "":
		return d, nil
	case CodeNoWay:
		why = ErrNoWay
	case CodeTooMany:
		why = ErrTooMany
	case CodeTooFast:
		why = ErrTooFast
	case CodePaused:
		why = ErrPaused
	default:
		return Decision{Reason: "the ask broker's refusal is unknown"}, fmt.Errorf("the ask broker refused with an unknown code %q", rep.Refused)
	}
	d.Allow = false
	return d, refusedAtOnce(q.Sandbox, why, "")
}

// CountRefusal counts a call refused elsewhere toward sandbox's pause.
// Best effort: a broker that is gone asks nothing more anyway.
func (r *Remote) CountRefusal(sandbox string) {
	var e Empty
	r.C.Call(context.Background(), CountSpec, &CountRequest{Sandbox: sandbox}, &e)
}
