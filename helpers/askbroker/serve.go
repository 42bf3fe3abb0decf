package askbroker

import (
	"context"
	"errors"
	"os"

	"lnk.dev/lnk/internal/wire"
)

// AskSpec is the broker's one request: an [AskRequest] in, a [Decision]
// out, no fds either way, any number per channel.
var AskSpec = wire.Spec{Type: 1, Name: "ask", States: wire.AnyState}

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

// Table is the broker's request table.
func (b *Broker) Table() map[wire.Type]*wire.Route {
	return wire.Table(wire.Handle(AskSpec, func(ctx context.Context, _ *wire.Request, req *AskRequest) (*Reply, []*os.File, error) {
		q, err := req.Question()
		if err != nil {
			return nil, nil, wire.Errorf("bad-question", "%v", err)
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
	}))
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
