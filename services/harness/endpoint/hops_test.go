package endpoint

import (
	"context"
	"encoding/hex"
	"testing"
)

// TestHopsHeader: Link-Hops reaches the turn with its Link-From; one
// without a Link-From (an owner's message has none), one not a decimal,
// one given twice or past MaxHops is refused 400, and nothing runs.
func TestHopsHeader(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	var hops []int
	a.Turn = turnFunc(func(ctx context.Context, m Message, onText func(string)) (int64, error) {
		hops = append(hops, m.Hops)
		return a.turn.Turn(ctx, m, onText)
	})
	port, _ := serve(t, a)
	h := func(extra ...string) map[string]string {
		m := map[string]string{HeaderAgent: "alpha", HeaderAgentID: idA, "Authorization": "Bearer " + hex.EncodeToString(a.Key)}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i]] = extra[i+1]
		}
		return m
	}
	body := `{"thread":"main","text":"x"}`
	for _, c := range []struct {
		name   string
		h      map[string]string
		status int
	}{
		{"hops 3 from a schedule", h(HeaderFrom, "schedule:j", HeaderHops, "3"), 200},
		{"no hops from a schedule", h(HeaderFrom, "schedule:j"), 200},
		{"hops without a sender", h(HeaderHops, "1"), 400},
		{"hops negative", h(HeaderFrom, "schedule:j", HeaderHops, "-1"), 400},
		{"hops not a number", h(HeaderFrom, "schedule:j", HeaderHops, "1e3"), 400},
		{"hops past the endpoint's", h(HeaderFrom, "schedule:j", HeaderHops, "1025"), 400},
		{"hops empty", h(HeaderFrom, "schedule:j", HeaderHops, ""), 400},
	} {
		if st := post(t, port, PathMessage, c.h, body); st != c.status {
			t.Errorf("%s: %d, want %d", c.name, st, c.status)
		}
	}
	if len(hops) != 2 || hops[0] != 3 || hops[1] != 0 {
		t.Fatalf("the turns saw hops %v, want [3 0]", hops)
	}
}

// TestSpeaksOnceRefused409: an agent whose Taken says the thread took the
// sender's message already answers 409 and runs no turn; the client
// reads it as IsAlreadyTaken. Another sender is answered.
func TestSpeaksOnceRefused409(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	a.Taken = func(thread, from string) (bool, error) { return from == "run:00000000000000aa", nil }
	port, _ := serve(t, a)
	c := client(t, a, port)
	_, err := c.SendMessage(context.Background(), Message{Thread: "main", Text: "ended", From: "run:00000000000000aa", Hops: 1}, nil, nil)
	if !IsAlreadyTaken(err) || a.turn.count() != 0 {
		t.Fatalf("a repeat: %v, %d turns", err, a.turn.count())
	}
	taken := false
	if _, err := c.SendMessage(context.Background(), Message{Thread: "main", Text: "ended", From: "run:00000000000000bb", Hops: 1}, func() { taken = true }, nil); err != nil || !taken || a.turn.count() != 1 {
		t.Fatalf("a first: %v, taken %v", err, taken)
	}
}

type turnFunc func(ctx context.Context, m Message, onText func(string)) (int64, error)

func (f turnFunc) Turn(ctx context.Context, m Message, onText func(string)) (int64, error) {
	return f(ctx, m, onText)
}
