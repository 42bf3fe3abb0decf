package endpoint

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/refusal"
)

// TestMissingConversationRefused: a message into a conversation the
// harness's store doesn't keep is refused 404 with its rule, before any
// turn, and logged once; main is made at need; the owner's message with
// new starts one (the positive control), which then takes messages from
// the owner, a schedule and a command's ending; new where one is kept is
// 409; a subagent's start and a stranger's post start their own (one
// into another's is refused 403 by its rule: TestOthersOnlyIntoTheirOwn); only
// the owner's message carries new; what can't be learned refuses 503.
func TestMissingConversationRefused(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	port, logged := serve(t, a)
	c := client(t, a, port)
	sendM := func(m Message) error {
		_, err := c.SendMessage(context.Background(), m, nil, nil)
		return err
	}
	status := func(err error) int {
		var r *RefusedError
		if errors.As(err, &r) {
			return r.Status
		}
		return 0
	}
	for _, m := range []Message{
		{Thread: "work-1", Text: "hello"},
		{Thread: "gone", Text: "stand up", From: "schedule:0123", Hops: 1},
		{Thread: "gone", Text: "ended", From: "run:0123", Hops: 1},
		{Thread: "gone", Text: "the subagent's answer", From: "task-7", Hops: 2},
	} {
		err := sendM(m)
		if !errors.Is(err, conversation.ErrMissing) || status(err) != http.StatusNotFound || !strings.Contains(err.Error(), "conversation "+m.Thread+" doesn't exist") {
			t.Errorf("%s into %s: %v, want 404 naming it", m.From, m.Thread, err)
		}
	}
	if n := a.turn.count(); n != 0 {
		t.Fatalf("%d turns ran for messages into no conversation", n)
	}
	if l := logged(); len(l) != 4 || strings.Count(strings.Join(l, "\n"), "work-1 doesn't exist") != 1 {
		t.Fatalf("logged:\n%s", strings.Join(l, "\n"))
	}

	// main is made at need; --new starts one, once.
	for _, m := range []Message{
		{Thread: "main", Text: "hello"},
		{Thread: "work-1", Text: "start it", New: true},
		{Thread: "work-1", Text: "go on"},
		{Thread: "work-1", Text: "stand up", From: "schedule:0123", Hops: 1},
		{Thread: "work-1", Text: "ended", From: "run:0123", Hops: 1},
		{Thread: "task-7", Text: "the task", From: "task-7", Hops: 1, Subagent: &Subagent{Tools: []string{}}},
		{Thread: "webhook:ci", Text: "a post", From: "stranger:webhook:ci"},
	} {
		if err := sendM(m); err != nil {
			t.Errorf("%q into %s (new %v): %v", m.From, m.Thread, m.New, err)
		}
	}
	if err := sendM(Message{Thread: "work-1", Text: "again", New: true}); !errors.Is(err, conversation.ErrExists) || status(err) != http.StatusConflict {
		t.Errorf("new where one is kept: %v, want 409", err)
	}
	if err := sendM(Message{Thread: "work-2", Text: "x", New: true, From: "schedule:0123"}); status(err) != http.StatusBadRequest {
		t.Errorf("new from a schedule: %v, want 400", err)
	}
	if n := len(a.turn.seen["work-1"]); n != 4 {
		t.Fatalf("work-1 took %d messages, want 4", n)
	}

	// What the store can't say refuses.
	b := newAgent(idB, "ana", "beta", "beta")
	b.Has = func(string) (bool, error) { return false, errors.New("chats/ can't be read") }
	bport, _ := serve(t, b)
	if _, _, err := send(t, client(t, b, bport), "main", "x"); status(err) != http.StatusServiceUnavailable || b.turn.count() != 0 {
		t.Fatalf("the store unreadable: %v, %d turns", err, b.turn.count())
	}
}

// TestRefusalsAreRefusals: the client's refusal is internal/refusal's
// shape (errors.As finds a *refusal.Refusal, as the way in and the
// scheduler look for one), its rule decided by its class: a 404 is the
// no-conversation rule's and final, a 403 a rule's and final, a 503 (the
// store unreadable) refusal.ErrBusy, for now. The positive control: a
// message taken is no error.
func TestRefusalsAreRefusals(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	port, _ := serve(t, a)
	c := client(t, a, port)
	if _, err := c.SendMessage(context.Background(), Message{Thread: "main", Text: "hello"}, nil, nil); err != nil {
		t.Fatalf("the positive control: %v", err)
	}
	for _, k := range []struct {
		m    Message
		busy bool
		rule string
	}{
		{Message{Thread: "gone", Text: "stand up", From: "schedule:0123", Hops: 1}, false, conversation.RuleMissing},
		{Message{Thread: "webhook:ci", Text: "into a stranger's"}, false, ""},
	} {
		_, err := c.SendMessage(context.Background(), k.m, nil, nil)
		r, ok := refusal.Of(err)
		if !ok || r.Rule != k.rule || errors.Is(err, refusal.ErrBusy) != k.busy {
			t.Errorf("%+v: %v (a refusal %v, rule %q)", k.m, err, ok, refusal.RuleOf(err))
		}
	}
	b := newAgent(idB, "ana", "beta", "beta")
	b.Has = func(string) (bool, error) { return false, errors.New("chats/ can't be read") }
	bport, _ := serve(t, b)
	_, err := client(t, b, bport).SendMessage(context.Background(), Message{Thread: "main", Text: "x", From: "schedule:0123", Hops: 1}, nil, nil)
	var re *RefusedError
	if _, ok := refusal.Of(err); !ok || !errors.Is(err, refusal.ErrBusy) || !errors.As(err, &re) || re.Status != http.StatusServiceUnavailable {
		t.Fatalf("a 503: %v", err)
	}
}
