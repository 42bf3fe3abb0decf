package webhook

import "context"

// Deliverer hands a message to the agent's harness. It returns once the
// harness has taken the message (never waiting for the turn to end), or
// with an error when the harness refused it or could not be reached.
type Deliverer interface {
	Deliver(ctx context.Context, agentID, from, thread, text string) error
}

// From is who a webhook's post is from, as the harness's Link-From
// names a stranger.
func From(hook string) string { return "stranger:webhook:" + hook }

// Thread is the conversation a webhook's posts go to: its own.
func Thread(hook string) string { return "webhook:" + hook }
