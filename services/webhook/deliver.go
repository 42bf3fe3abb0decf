package webhook

import (
	"context"
	"fmt"
	"sync"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/harness/endpoint"
)

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

// Harness delivers to the agent's Link Harness through its endpoint's
// own client (services/harness/endpoint: the harness's proof first, on
// the connection the key and the post then go on), returning once the
// harness took the post; its answer goes nowhere.
type Harness struct {
	agentID string
	c       *endpoint.Client
	wg      sync.WaitGroup
}

// HarnessOf is the Deliverer to agent a's running harness, from its
// bridge.json.
func HarnessOf(a Agent) (*Harness, error) {
	c, err := endpoint.ClientFor(a.Home, &caps.Agent{Name: a.Name, ID: a.ID, Owner: a.Owner})
	if err != nil {
		return nil, fmt.Errorf("the agent's harness has not said where its endpoint is (lnk agent start writes ~/.lnk/agents/%s/bridge.json): %w", a.Name, err)
	}
	return &Harness{agentID: a.ID, c: c}, nil
}

// Deliver implements Deliverer.
func (h *Harness) Deliver(ctx context.Context, agentID, from, thread, text string) error {
	if agentID != h.agentID {
		return fmt.Errorf("a post for agent %s handed to agent %s's harness", agentID, h.agentID)
	}
	h.wg.Add(1)
	if err := h.c.Hand(ctx, from, thread, text, h.wg.Done); err != nil {
		h.wg.Done()
		return err
	}
	return nil
}

// Wait waits for the answers still being read (tests, shutdown).
func (h *Harness) Wait() { h.wg.Wait() }
