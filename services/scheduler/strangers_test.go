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

// TestSubagentListWithinTheAgents: the parent's list in _meta
// (link.local/tools) is the harness's word for what the conversation
// has, never for what the agent has: a name in it the agent is granted
// none of is refused, with no tools named and with some, and no start is
// written; the control, the agent's own tools, starts one with them.
func TestSubagentListWithinTheAgents(t *testing.T) {
	home, ag := newAgent(t, "")
	p := connect(t, home)
	file := "file-" + ag.ID
	for _, args := range []map[string]any{{"task": "look"}, {"task": "look", "tools": []string{"file"}}} {
		out, isErr := p.call(meta("main", 0, []any{file, "shell"}, ""), "start_subagent", args)
		if !isErr || !strings.Contains(out, `"shell"`) || !strings.Contains(out, "not among the agent's tools") || !strings.Contains(out, "hint:") {
			t.Errorf("a parent's list naming a tool the agent lacks (%v): %v %q", args, isErr, out)
		}
	}
	if out, _ := p.call(in("main", 0), "list", map[string]any{}); out != "no jobs in this conversation" {
		t.Fatalf("a refused start was written: %q", out)
	}
	out, isErr := p.call(meta("main", 0, []any{file}, ""), "start_subagent", map[string]any{"task": "look"})
	if j := startedJob(t, home, out); isErr || len(j.Task.Tools) != 1 || j.Task.Tools[0] != file {
		t.Fatalf("the control: %v %q %+v", isErr, out, j.Task)
	}
}
