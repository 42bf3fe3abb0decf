package askbroker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Wait bounds: ask_wait is two minutes unless Link's settings say
// otherwise, and never more than a day.
const (
	DefaultWait = 2 * time.Minute
	MaxWait     = 24 * time.Hour
)

// An Asker is one way of reaching the owner: a dialog, a terminal, and —
// when the connections work lands — the owner's chats. Ask shows the
// question and returns the owner's answer (true allows the call once), or
// an error when this way can't answer; it returns when ctx ends, which
// withdraws the question from it.
type Asker interface {
	Way() string
	Ask(ctx context.Context, a *Asked) (allow bool, err error)
}

// Asked is a question as handed to each way: its id (also the code a chat
// replies with), the terminal's code, and when its time is up.
type Asked struct {
	ID       string
	Code     string // never logged, never in the store
	Question *Question
	Deadline time.Time
}

// A Decision is how a question ended.
type Decision struct {
	ID     string `json:"id"`
	Allow  bool   `json:"allow"`
	By     string `json:"by"`     // the way that answered, or "timeout"
	Reason string `json:"reason"` // for a refusal: why, and the --allow that lets it through
}

// Config is what a [Broker] asks with. Every way is optional.
type Config struct {
	Store    *Store        // ~/.lnk/questions
	Terminal *Terminal     // the proxy's controlling terminal
	Dialog   Asker         // a desktop dialog, asked only when it is available
	Chats    []Asker       // the owner's chats: the seam for the connections work
	Notifier Notice        // tells the desktop a question waits, where no dialog shows
	Wait     time.Duration // ask_wait; DefaultWait when zero
	Limits   Limits
	Log      func(line string) // one line per question and per refusal
}

// A Broker asks the owner every way there is at once.
type Broker struct {
	cfg     Config
	limits  *limiter
	release func() // the terminal's shared lock in the store
}

// New returns a broker asking as cfg says. A terminal holds a shared lock
// in the store for as long as the broker runs, so questions wait there.
func New(cfg Config) (*Broker, error) {
	if cfg.Wait == 0 {
		cfg.Wait = DefaultWait
	}
	if cfg.Wait < 0 || cfg.Wait > MaxWait {
		return nil, fmt.Errorf("ask_wait %v is out of range: at most %v", cfg.Wait, MaxWait)
	}
	if cfg.Log == nil {
		cfg.Log = func(string) {}
	}
	b := &Broker{cfg: cfg, limits: newLimiter(cfg.Limits), release: func() {}}
	if cfg.Terminal != nil && cfg.Store != nil {
		r, err := cfg.Store.Answering()
		if err != nil {
			return nil, err
		}
		b.release = r
	}
	return b, nil
}

// CountRefusal counts a call refused elsewhere (by a tool's rules, by the
// bridge) toward sandbox's pause, as refused answers count, and logs a
// pause it starts.
func (b *Broker) CountRefusal(sandbox string) {
	now := time.Now()
	if until := b.limits.refused(sandbox, now); !until.IsZero() {
		b.cfg.Log(fmt.Sprintf("ask pause sandbox=%q: %d refusals; its questions are refused at once until %s", sandbox, b.limits.l.PauseAfter, until.UTC().Format(time.RFC3339)))
	}
}

// Close lets go of the store's lock.
func (b *Broker) Close() { b.release() }

type dialogAvailable interface{ Available() bool }

// A Notice tells the owner a question waits in the store; it answers
// nothing. [Notifier] and [RemoteNotifier] are two.
type Notice interface {
	Notify(ctx context.Context, a *Asked) error
}

// Ask asks q every way there is at once and returns the first answer. A
// question refused at once returns a *Refusal with the decision.
func (b *Broker) Ask(ctx context.Context, q *Question) (Decision, error) {
	q.Clean()
	now := time.Now()
	if err := b.limits.admit(q.Sandbox, now); err != nil {
		b.cfg.Log(fmt.Sprintf("ask refused sandbox=%q what=%q: %v", q.Sandbox, q.What, err))
		return Decision{Reason: err.Error() + "; " + q.Allow + " lets it through"}, err
	}
	d, err := b.ask(ctx, q, now)
	if until := b.limits.done(q.Sandbox, !d.Allow && !errors.Is(err, ErrNoWay), time.Now()); !until.IsZero() {
		b.cfg.Log(fmt.Sprintf("ask pause sandbox=%q: %d refusals; its questions are refused at once until %s", q.Sandbox, b.limits.l.PauseAfter, until.UTC().Format(time.RFC3339)))
	}
	return d, err
}

func (b *Broker) ask(ctx context.Context, q *Question, now time.Time) (Decision, error) {
	var ways []Asker
	if d := b.cfg.Dialog; d != nil {
		if av, ok := d.(dialogAvailable); !ok || av.Available() {
			ways = append(ways, d)
		}
	}
	inStore := b.cfg.Store != nil && b.cfg.Store.SomeoneAnswering()
	if inStore {
		if b.cfg.Terminal != nil {
			ways = append(ways, b.cfg.Terminal)
		}
		ways = append(ways, b.cfg.Chats...)
	}
	if len(ways) == 0 && !inStore {
		err := refusedAtOnce(q.Sandbox, ErrNoWay, "")
		b.cfg.Log(fmt.Sprintf("ask refused sandbox=%q what=%q: %v", q.Sandbox, q.What, err))
		return Decision{Reason: err.Error() + "; " + q.Allow + " lets it through"}, err
	}
	a := &Asked{Code: newCode(), Question: q, Deadline: now.Add(b.cfg.Wait)}
	if inStore {
		id, err := b.cfg.Store.Put(q, a.Deadline)
		if err != nil {
			return Decision{Reason: "the store failed: " + err.Error()}, err
		}
		a.ID = id
		defer b.cfg.Store.Remove(id)
	} else {
		a.ID = newID()
	}
	names := make([]string, 0, len(ways)+1)
	for _, w := range ways {
		names = append(names, w.Way())
	}
	if inStore {
		names = append(names, "store")
	}
	b.cfg.Log(fmt.Sprintf("ask id=%s sandbox=%q agent=%q what=%q ways=%s", a.ID, q.Sandbox, q.Agent, q.What, strings.Join(names, ",")))

	wctx, withdraw := context.WithCancelCause(ctx)
	wctx, cancelT := context.WithDeadlineCause(wctx, a.Deadline, errTimeUp)
	defer cancelT()
	answers := make(chan Answer, len(ways)+1)
	failed := make(chan error, len(ways)+1)
	var wg sync.WaitGroup
	for _, w := range ways {
		wg.Add(1)
		go func() {
			defer wg.Done()
			allow, err := w.Ask(wctx, a)
			if err != nil {
				if wctx.Err() == nil {
					b.cfg.Log(fmt.Sprintf("ask id=%s way=%s gave no answer: %v", a.ID, w.Way(), err))
				}
				failed <- err
				return
			}
			answers <- Answer{Allow: allow, By: w.Way()}
		}()
	}
	if inStore && b.cfg.Notifier != nil && !hasWay(ways, "dialog") {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.cfg.Notifier.Notify(wctx, a); err != nil && wctx.Err() == nil {
				b.cfg.Log(fmt.Sprintf("ask id=%s notification failed: %v", a.ID, err))
			}
		}()
	}
	if inStore {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ans, err := b.cfg.Store.Wait(wctx, a.ID)
			if err != nil {
				failed <- err
				return
			}
			answers <- ans
		}()
	}
	live := len(names)
	var first Answer
wait:
	for {
		select {
		case first = <-answers:
			break wait
		case <-failed:
			if live--; live == 0 {
				first = Answer{Allow: false, By: "no way left"}
				break wait
			}
		case <-wctx.Done():
			first = Answer{Allow: false, By: "timeout"}
			if ctx.Err() != nil { // the call that asked was cancelled: withdrawn
				first.By = "withdrawn"
			}
			break wait
		}
	}
	final := first
	if inStore {
		// The store decides: its answer file is linked once.
		if err := b.cfg.Store.Answer(a.ID, first); err != nil {
			if got, ok, _ := b.cfg.Store.ReadAnswer(a.ID); ok {
				final = got
			} else {
				final = Answer{Allow: false, By: "store failed"}
			}
		}
	}
	withdraw(decided(final))
	wg.Wait()
	d := Decision{ID: a.ID, Allow: final.Allow, By: final.By}
	switch {
	case final.Allow:
	case final.By == "timeout":
		d.Reason = fmt.Sprintf("timed out: no answer within %v, so refused; %s lets it through", b.cfg.Wait, q.Allow)
	case final.By == "withdrawn":
		d.Reason = fmt.Sprintf("withdrawn: %v", context.Cause(ctx))
	case final.By == "no way left" || final.By == "store failed":
		d.Reason = fmt.Sprintf("refused: %s to answer it; %s lets it through", final.By, q.Allow)
	default:
		d.Reason = fmt.Sprintf("the owner said no (%s); %s lets it through", final.By, q.Allow)
	}
	b.cfg.Log(fmt.Sprintf("ask answer id=%s allow=%v by=%s", a.ID, d.Allow, d.By))
	return d, nil
}

var errTimeUp = errors.New("no answer in time: refused")

// decided is the final answer as the cause that withdraws every way, so
// each can say truthfully how its question ended.
type decided Answer

func (d decided) Error() string {
	switch {
	case d.Allow:
		return "allowed once, answered by " + d.By
	case d.By == "timeout":
		return "timed out unanswered: refused"
	case d.By == "withdrawn":
		return "withdrawn: the call that asked was cancelled"
	}
	return "refused, answered by " + d.By
}

func hasWay(ways []Asker, name string) bool {
	for _, w := range ways {
		if w.Way() == name {
			return true
		}
	}
	return false
}
