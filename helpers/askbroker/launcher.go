package askbroker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"lnk.dev/lnk/internal/wire"
)

// The dialog launcher is a process of its own beside the broker: it holds
// the desktop session (its variables, the right to exec the dialog and
// notification programs, and the X or D-Bus connections they make), and
// the broker holds none of it. It takes a question's text, never a
// program or an argument: it builds the command line itself.

// ShowSpec asks the launcher to show a question: a dialog (the reply is
// the owner's click) or a notification (the reply comes once it is sent).
var ShowSpec = wire.Spec{Type: 1, Name: "show", States: wire.AnyState}

// WithdrawSpec takes a shown dialog away: its program is killed.
var WithdrawSpec = wire.Spec{Type: 2, Name: "withdraw", States: wire.AnyState}

// ShowRequest is a question as the launcher shows it.
type ShowRequest struct {
	Kind    string `json:"kind"` // "dialog" or "notify"
	ID      string `json:"id"`
	What    string `json:"what"`
	Sandbox string `json:"sandbox"`
	Agent   string `json:"agent"`
	Call    string `json:"call"`
	Allow   string `json:"allow"`
	Cut     bool   `json:"cut"`
}

// ShowReply is the owner's answer on a dialog (false for a notification).
type ShowReply struct {
	Allow bool `json:"allow"`
}

// WithdrawRequest names the question to take away.
type WithdrawRequest struct {
	ID string `json:"id"`
}

// Empty is an empty reply.
type Empty struct{}

// Launcher serves a broker's show and withdraw requests.
type Launcher struct {
	Dialog   *Dialog
	Notifier *Notifier

	mu        sync.Mutex
	shown     map[string]context.CancelCauseFunc
	withdrawn map[string]bool // withdrawn before their show arrived
}

var errWithdrawn = errors.New("withdrawn")

// Serve answers the broker on ch until it closes.
func (l *Launcher) Serve(ctx context.Context, ch *os.File, logf func(string, ...any)) error {
	l.shown = map[string]context.CancelCauseFunc{}
	l.withdrawn = map[string]bool{}
	show := wire.Handle(ShowSpec, func(ctx context.Context, _ *wire.Request, r *ShowRequest) (*ShowReply, []*os.File, error) {
		if !ValidID(r.ID) {
			return nil, nil, wire.Errorf("bad-question", "bad question id")
		}
		q := &Question{What: r.What, Sandbox: r.Sandbox, Agent: r.Agent, Call: r.Call, Allow: r.Allow, Cut: r.Cut}
		q.Clean()
		a := &Asked{ID: r.ID, Question: q}
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		l.mu.Lock()
		if l.withdrawn[r.ID] {
			delete(l.withdrawn, r.ID)
			l.mu.Unlock()
			return nil, nil, wire.Errorf("no-answer", "withdrawn before it showed")
		}
		l.shown[r.ID] = cancel
		l.mu.Unlock()
		defer func() { l.mu.Lock(); delete(l.shown, r.ID); l.mu.Unlock() }()
		switch {
		case r.Kind == "dialog" && l.Dialog != nil:
			allow, err := l.Dialog.Ask(ctx, a)
			if err != nil {
				return nil, nil, wire.Errorf("no-answer", "%v", err)
			}
			return &ShowReply{Allow: allow}, nil, nil
		case r.Kind == "notify" && l.Notifier != nil:
			if err := l.Notifier.Notify(ctx, a); err != nil {
				return nil, nil, wire.Errorf("no-answer", "%v", err)
			}
			return &ShowReply{}, nil, nil
		}
		return nil, nil, wire.Errorf("no-way", "no %s here", r.Kind)
	})
	withdraw := wire.Handle(WithdrawSpec, func(ctx context.Context, _ *wire.Request, r *WithdrawRequest) (*Empty, []*os.File, error) {
		l.mu.Lock()
		if cancel := l.shown[r.ID]; cancel != nil {
			cancel(errWithdrawn)
		} else if ValidID(r.ID) {
			if len(l.withdrawn) > 1024 {
				clear(l.withdrawn)
			}
			l.withdrawn[r.ID] = true
		}
		l.mu.Unlock()
		return &Empty{}, nil, nil
	})
	srv, err := wire.NewServer(ch, wire.Table(show, withdraw), logf)
	if err != nil {
		return err
	}
	return srv.Serve(ctx)
}

// RemoteDialog asks on a dialog through a launcher.
type RemoteDialog struct{ C *wire.Client }

// RemoteNotifier notifies through a launcher.
type RemoteNotifier struct{ C *wire.Client }

// Way names the dialog in answers and logs.
func (d *RemoteDialog) Way() string { return "dialog" }

func showRequest(kind string, a *Asked) *ShowRequest {
	q := a.Question
	return &ShowRequest{Kind: kind, ID: a.ID, What: q.What, Sandbox: q.Sandbox, Agent: q.Agent, Call: q.Call, Allow: q.Allow, Cut: q.Cut}
}

// Ask shows the dialog through the launcher; when ctx ends it withdraws
// it and waits until the launcher has killed it.
func (d *RemoteDialog) Ask(ctx context.Context, a *Asked) (bool, error) {
	type res struct {
		allow bool
		err   error
	}
	done := make(chan res, 1)
	go func() {
		var r ShowReply
		_, err := d.C.Call(context.Background(), ShowSpec, showRequest("dialog", a), &r)
		done <- res{r.Allow, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return false, fmt.Errorf("%w: %v", ErrDialogFailed, r.err)
		}
		return r.allow, nil
	case <-ctx.Done():
		var e Empty
		d.C.Call(context.Background(), WithdrawSpec, &WithdrawRequest{ID: a.ID}, &e)
		<-done
		return false, context.Cause(ctx)
	}
}

// Notify sends the notification through the launcher.
func (n *RemoteNotifier) Notify(ctx context.Context, a *Asked) error {
	var r ShowReply
	_, err := n.C.Call(ctx, ShowSpec, showRequest("notify", a), &r)
	return err
}
