package endpoint

import (
	"encoding/hex"
	"strings"
	"testing"
)

// TestOthersOnlyIntoTheirOwn: the endpoint itself keeps a message from
// others where internal/conversation's rule puts it, whoever holds the
// key: a stranger's only into the conversation named as it, never the
// owner's main (kept) or another stranger's; a schedule's, a background
// command's or a subagent's answer never into a stranger's (kept). Each
// is refused 403, logged with why, and runs no turn. The controls: the
// stranger into its own, the schedule into main, are taken.
func TestOthersOnlyIntoTheirOwn(t *testing.T) {
	a := newAgent(idA, "ana", "alpha", "alpha")
	port, logged := serve(t, a)
	h := func(from string) map[string]string {
		m := map[string]string{HeaderAgent: "alpha", HeaderAgentID: idA, "Authorization": "Bearer " + hex.EncodeToString(a.Key)}
		if from != "" {
			m[HeaderFrom] = from
		}
		return m
	}
	body := func(thread string) string { return `{"thread":"` + thread + `","text":"x"}` }
	// Both conversations kept: the owner's main, the webhook's own.
	if st := post(t, port, PathMessage, h(""), body("main")); st != 200 {
		t.Fatalf("the owner's main: %d", st)
	}
	if st := post(t, port, PathMessage, h("stranger:webhook:ci"), body("webhook:ci")); st != 200 {
		t.Fatalf("a stranger into its own: %d", st)
	}
	if st := post(t, port, PathMessage, h("stranger:webhook:cd"), body("webhook:cd")); st != 200 {
		t.Fatalf("another stranger into its own: %d", st)
	}
	before := a.turn.count()
	for _, c := range []struct{ from, thread string }{
		{"stranger:webhook:ci", "main"},
		{"stranger:webhook:ci", "webhook:cd"},
		{"schedule:j", "webhook:ci"},
		{"run:00000000000000aa", "webhook:ci"},
		{"task-aa", "webhook:ci"},
	} {
		if st := post(t, port, PathMessage, h(c.from), body(c.thread)); st != 403 {
			t.Errorf("%s into %s: %d, want 403", c.from, c.thread, st)
		}
	}
	if n := a.turn.count(); n != before {
		t.Fatalf("%d turns ran for refused messages", n-before)
	}
	refusals := 0
	for _, l := range logged() {
		if strings.Contains(l, "refused POST /link/message (403)") && (strings.Contains(l, "stranger's conversation") || strings.Contains(l, "its own conversation")) {
			refusals++
		}
	}
	if refusals != 5 {
		t.Fatalf("%d refusals logged with why, want 5: %q", refusals, logged())
	}
	// The control: a schedule into the owner's main.
	if st := post(t, port, PathMessage, h("schedule:j"), body("main")); st != 200 || a.turn.count() != before+1 {
		t.Fatalf("a schedule into main: %d", st)
	}
}
