package askbroker

import (
	"context"
	"errors"
	"os"
	"sync"

	"lnk.dev/lnk/internal/wire"
)

// AskSpec is the broker's question: an [AskRequest] in, a [Reply] out, no
// fds either way, any number per channel, each answered when it ends.
var AskSpec = wire.Spec{Type: 1, Name: "ask", States: wire.AnyState}

// WithdrawAskSpec withdraws a question still being asked (the call that
// asked it was cancelled): it names the question by the ref its caller
// gave it, and its [AskSpec] reply then comes at once, a refusal.
var WithdrawAskSpec = wire.Spec{Type: 2, Name: "withdraw", States: wire.AnyState}

// CountSpec counts a call refused elsewhere (by a tool's rules, by the
// bridge) toward a sandbox's pause, as [Broker.CountRefusal] does.
var CountSpec = wire.Spec{Type: 3, Name: "count-refusal", States: wire.AnyState}

// Refusal codes a [Decision] carries for a question refused at once.
const (
	CodeNoWay   = "no-way"
	CodeTooMany = "too-many"
	CodeTooFast = "too-fast"
	CodePaused  = "paused"
)

// Reply is what the channel answers a question with.
type Reply struct {
	ID     string `json:"id"`
	Allow  bool   `json:"allow"`
	By     string `json:"by"`
	Reason string `json:"reason"`
	// Refused is set for a question refused at once (one of the Code*
	// constants); empty when someone was asked.
	Refused string `json:"refused"`
}

// WithdrawRef names a question by its caller's ref.
type WithdrawRef struct {
	Ref string `json:"ref"`
}

// CountRequest names the sandbox a refusal counts against.
type CountRequest struct {
	Sandbox string `json:"sandbox"`
}

// errCancelled is why a withdrawn question ended: its call was cancelled.
var errCancelled = errors.New("withdrawn: the call that asked was cancelled")

// Table is the broker's request table.
func (b *Broker) Table() map[wire.Type]*wire.Route {
	var mu sync.Mutex
	asking := map[string]context.CancelCauseFunc{} // by ref
	ask := wire.Handle(AskSpec, func(ctx context.Context, _ *wire.Request, req *AskRequest) (*Reply, []*os.File, error) {
		q, err := req.Question()
		if err != nil {
			return nil, nil, wire.Errorf("bad-question", "%v", err)
		}
		if req.Ref != "" {
			if !ValidID(req.Ref) {
				return nil, nil, wire.Errorf("bad-question", "bad ref")
			}
			var cancel context.CancelCauseFunc
			ctx, cancel = context.WithCancelCause(ctx)
			defer cancel(nil)
			mu.Lock()
			if _, dup := asking[req.Ref]; dup {
				mu.Unlock()
				return nil, nil, wire.Errorf("bad-question", "ref asked twice")
			}
			asking[req.Ref] = cancel
			mu.Unlock()
			defer func() { mu.Lock(); delete(asking, req.Ref); mu.Unlock() }()
		}
		d, err := b.Ask(ctx, q)
		r := &Reply{ID: d.ID, Allow: d.Allow, By: d.By, Reason: d.Reason}
		switch {
		case err == nil:
		case errors.Is(err, ErrNoWay):
			r.Refused = CodeNoWay
		case errors.Is(err, ErrTooMany):
			r.Refused = CodeTooMany
		case errors.Is(err, ErrTooFast):
			r.Refused = CodeTooFast
		case errors.Is(err, ErrPaused):
			r.Refused = CodePaused
		default:
			return nil, nil, err
		}
		return r, nil, nil
	})
	withdraw := wire.Handle(WithdrawAskSpec, func(_ context.Context, _ *wire.Request, req *WithdrawRef) (*Empty, []*os.File, error) {
		mu.Lock()
		cancel := asking[req.Ref]
		mu.Unlock()
		if cancel != nil {
			cancel(errCancelled)
		}
		return &Empty{}, nil, nil
	})
	count := wire.Handle(CountSpec, func(_ context.Context, _ *wire.Request, req *CountRequest) (*Empty, []*os.File, error) {
		if req.Sandbox == "" {
			return nil, nil, wire.Errorf("bad-request", "no sandbox")
		}
		b.CountRefusal(req.Sandbox)
		return &Empty{}, nil, nil
	})
	return wire.Table(ask, withdraw, count)
}

// Serve answers questions on ch (a SOCK_SEQPACKET socket from the kernel)
// until it closes or ctx ends.
func (b *Broker) Serve(ctx context.Context, ch *os.File, logf func(format string, a ...any)) error {
	srv, err := wire.NewServer(ch, b.Table(), logf)
	if err != nil {
		return err
	}
	return srv.Serve(ctx)
}
