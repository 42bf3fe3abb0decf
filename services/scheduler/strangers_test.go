package scheduler

import (
	"strings"
	"testing"
)

// TestStrangersByTheOneRule: a conversation named as its sender
// (<kind>:<name>, internal/conversation's rule) is a stranger's whatever
// the kind, not a webhook's alone: from one, add, list and
// start_subagent are refused, and nothing is scheduled. The control: the
// same calls from the owner's main are taken.
func TestStrangersByTheOneRule(t *testing.T) {
	home, ag := newAgent(t, "")
	p := connect(t, home)
	parent := []any{"file-" + ag.ID}
	for _, th := range []string{"telegram:eve", "Webhook:gh", "x:y"} {
		if out, isErr := p.call(in(th, 0), "add", map[string]any{"text": "later", "in_minutes": 5}); !isErr || !strings.Contains(out, "stranger") {
			t.Errorf("add from %s: %v %q", th, isErr, out)
		}
		if out, isErr := p.call(in(th, 0), "list", map[string]any{}); !isErr || !strings.Contains(out, "stranger") {
			t.Errorf("list from %s: %v %q", th, isErr, out)
		}
		if out, isErr := p.call(meta(th, 0, parent, ""), "start_subagent", map[string]any{"task": "look"}); !isErr || !strings.Contains(out, "stranger") {
			t.Errorf("start_subagent from %s: %v %q", th, isErr, out)
		}
	}
	if out, _ := p.call(in("main", 0), "list", map[string]any{}); out != "no jobs in this conversation" {
		t.Fatalf("a refused call scheduled something: %q", out)
	}
	// The control.
	if out, isErr := p.call(in("main", 0), "add", map[string]any{"text": "later", "in_minutes": 5}); isErr || !strings.Contains(out, "scheduled job") {
		t.Fatalf("add from main: %q", out)
	}
	if out, isErr := p.call(meta("main", 0, parent, ""), "start_subagent", map[string]any{"task": "look"}); isErr || !startedID.MatchString(out) {
		t.Fatalf("start_subagent from main: %q", out)
	}
}
