package endpoint

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestOthersTurnEndsAtItsLimit: a message from others' turn that runs
// past the agent's TurnLimit is ended by the endpoint itself, its error
// saying so sent to the caller and logged once; the positive control, a
// turn within it, is answered.
func TestOthersTurnEndsAtItsLimit(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	a.TurnLimit = 300 * time.Millisecond
	a.turn.gate = make(chan struct{}) // each turn waits: held until its limit
	port, logged := serve(t, a)
	c := client(t, a, port)
	m := Message{Thread: "main", Text: "stand up", From: "schedule:0123", Hops: 1}
	_, err := c.SendMessage(context.Background(), m, nil, nil)
	var te *TurnError
	if !errors.As(err, &te) || !strings.Contains(te.Why, TurnPastLimit(a.TurnLimit)) {
		t.Fatalf("a turn past its limit: %v", err)
	}
	if l := strings.Join(logged(), "\n"); strings.Count(l, "passed the 300ms a turn of a message from others may take") != 1 {
		t.Fatalf("logged:\n%s", l)
	}
	close(a.turn.gate)
	if _, err := c.SendMessage(context.Background(), m, nil, nil); err != nil {
		t.Fatalf("a turn within its limit: %v", err)
	}
}
