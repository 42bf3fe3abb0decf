package scheduler

import (
	"slices"
	"strings"
	"testing"
)

// TestStartSubagentNamesOneRule: start_subagent refuses a tool's or a
// model's name Link Harness would refuse (internal/toolname), where the
// call names it, saying why; a parent's list (_meta link.local/tools)
// holding such a name is refused whole where it is read
// (linkmeta.CallTools keeps the same rule: Link Harness never sends
// another), never carried into a start the harness's endpoint would
// refuse later. The same call naming a tool by
// a name that keeps the rule starts a subagent with it.
func TestStartSubagentNamesOneRule(t *testing.T) {
	home, ag := newAgent(t, "[tools.grant.ok-tool]\n")
	p := connect(t, home)
	file := "file-" + ag.ID
	long := strings.Repeat("t", 62) // with "__" and a call: past 64
	parent := []any{file, "ok-tool"}
	for _, bad := range []string{"my.tool", long} {
		if out, isErr := p.call(meta("main", 0, append(slices.Clone(parent), bad), ""), "start_subagent", map[string]any{"task": "look"}); !isErr || !strings.Contains(out, "not a list of tool names") {
			t.Errorf("a parent's list naming %q: %q", bad, out)
		}
	}

	for _, bad := range []string{"my.tool", long} {
		out, isErr := p.call(meta("main", 0, parent, ""), "start_subagent", map[string]any{"task": "look", "tools": []string{bad}})
		if !isErr || !strings.Contains(out, "is no tool's name") || !strings.Contains(out, "hint:") {
			t.Errorf("tool %q: %q", bad, out)
		}
	}
	out, isErr := p.call(meta("main", 0, parent, ""), "start_subagent", map[string]any{"task": "look", "tools": []string{"ok-tool", "file"}})
	if j := startedJob(t, home, out); isErr || !slices.Equal(j.Task.Tools, []string{file, "ok-tool"}) {
		t.Errorf("tools that keep the rule: %+v (%q)", j.Task, out)
	}
	out, _ = p.call(meta("main", 0, parent, ""), "start_subagent", map[string]any{"task": "look"})
	if j := startedJob(t, home, out); !slices.Equal(j.Task.Tools, []string{file, "ok-tool"}) {
		t.Errorf("the parent's list keeps only names the harness offers: %+v", j.Task)
	}

	if out, isErr := p.call(meta("main", 0, parent, ""), "start_subagent", map[string]any{"task": "look", "model": "modèle"}); !isErr || !strings.Contains(out, "is no model's name") {
		t.Errorf("a model past ASCII: %q", out)
	}
	if out, isErr := p.call(meta("main", 0, parent, "modèle"), "start_subagent", map[string]any{"task": "look"}); !isErr || !strings.Contains(out, "not a model's name") {
		t.Errorf("a _meta model past ASCII: %q", out)
	}
}

// TestParseJobTaskNames: a kept subagent's start whose tool or model
// name breaks the rule is refused when read; one that keeps it is read
// back as written.
func TestParseJobTaskNames(t *testing.T) {
	job := func(task string) []byte {
		return []byte(`{"id":"0123456789abcdef","thread":"main","hops":1,"text":"x","at":"2026-12-07T10:00:00Z","next":"2026-12-07T10:00:00Z","created":"2026-12-07T09:00:00Z","task":` + task + `}`)
	}
	if j, err := ParseJob(job(`{"tools":["github","memory-0123456789abcdef0123456789abcdef"],"model":"gpt-4o"}`)); err != nil || len(j.Task.Tools) != 2 || j.Task.Model != "gpt-4o" {
		t.Fatalf("a start that keeps the rule: %+v %v", j, err)
	}
	for _, bad := range []string{
		`{"tools":["my.tool"]}`,
		`{"tools":["` + strings.Repeat("t", 62) + `"]}`,
		`{"tools":["a__b"]}`,
		`{"tools":[""]}`,
		`{"tools":[],"model":"modèle"}`,
		`{"tools":[],"model":"gpt 4"}`,
	} {
		if _, err := ParseJob(job(bad)); err == nil || !strings.Contains(err.Error(), "a subagent's start") {
			t.Errorf("task %s: %v", bad, err)
		}
	}
}
