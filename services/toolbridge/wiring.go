package toolbridge

import (
	"context"
	"fmt"
	"strings"
	"time"

	"lnk.dev/lnk/helpers/askbroker"
	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/refusal"
)

// OwnerBroker is what asks the owner: the ask broker's process through
// its channel (*askbroker.Remote, as lnk sandbox run starts it), or a
// broker in this process (*askbroker.Broker, in tests).
type OwnerBroker interface {
	Ask(ctx context.Context, q *askbroker.Question) (askbroker.Decision, error)
	CountRefusal(sandbox string)
}

// OwnerAsker asks through askbroker: the real [Asker] for a sandbox's
// bridge. Each question is one call (its tool, name, hints and arguments
// as sent); an approval covers that call alone, once.
type OwnerAsker struct {
	Broker  OwnerBroker
	Sandbox string // the sandbox that asks, as the broker counts it
}

// An OwnerRefusal is a call the owner was asked about and did not allow:
// refused, unanswered in time, or refused at once (Err the broker's
// refusal then, [askbroker.RefusedAtOnce]; nil when someone was asked).
// Reason says which, and names the --allow that lets the call through.
// It is Link's one refusal shape (internal/refusal).
type OwnerRefusal = refusal.Refusal

// Ask puts q to the owner and returns true only for a yes; a refusal is
// an *OwnerRefusal saying why.
func (a *OwnerAsker) Ask(ctx context.Context, q Question) (bool, error) {
	call := fmt.Sprintf("tool %s: %s %s", q.Tool, q.Call, q.Arguments)
	if len(q.Hints) > 0 {
		call += " (the server says: " + strings.Join(q.Hints, ", ") + ")"
	}
	d, err := a.Broker.Ask(ctx, &askbroker.Question{
		What:    "mcp call",
		Sandbox: a.Sandbox,
		Agent:   q.Agent,
		Call:    call,
		Allow:   allowHint(q),
	})
	switch {
	case askbroker.RefusedAtOnce(err):
		return false, &OwnerRefusal{Reason: d.Reason, Err: err}
	case err != nil:
		return false, err
	case !d.Allow:
		return false, &OwnerRefusal{Reason: d.Reason}
	}
	return true, nil
}

// Counted reports whether the Broker counted the refusal Ask returned
// with err toward the sandbox's pause: an owner's no, a question
// unanswered in time and one the store failed are counted there; one
// refused at once (*askbroker.Refusal: paused, too many or too fast, no
// way to ask) is not, and is left to the bridge to count.
func (a *OwnerAsker) Counted(err error) bool {
	return !askbroker.RefusedAtOnce(err)
}

// allowHint is the command that lets q's call through without asking:
// the agent's grant, or for a sandbox of no agent, lnk sandbox run's own
// flags.
func allowHint(q Question) string { return grantHint(q.Agent, q.Tool, q.Call) }

// AuditLog writes each event as a line of the wire's log: the tool, the
// call's name and its outcome, never its arguments or answer. A refusal
// is a "refuse" line with its reason; the rest are "use" lines.
func AuditLog(l *audit.Log, sandbox string) func(Event) {
	return func(e Event) {
		kind, reason := audit.KindUse, e.Outcome
		if r, ok := strings.CutPrefix(e.Outcome, "refused: "); ok {
			kind, reason = audit.KindRefuse, r
		}
		l.Write(audit.Entry{Time: time.Now(), Kind: kind, Agent: e.Agent, Request: strings.TrimSpace("mcp " + e.Call),
			Route: "tool " + e.Tool + " (sandbox " + sandbox + ")", Reason: reason})
	}
}
