package scheduler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
)

// TestSubagentParentModelWithinAllow: the parent's model (_meta
// link.local/model) a subagent is started on is held to the rule Link
// Harness keeps at each of its turns (caps.SubagentModelAllowed): a
// model neither the agent's own (link-builtin: its agent.toml names no
// [model]) nor one [model] allow names is refused, with a hint, and no
// start is written, even when the call names an allowed model of its
// own. The controls: the agent's own and an allowed model are taken and
// read back from the start written, and a call may name the agent's own
// model under a parent on an allowed one.
func TestSubagentParentModelWithinAllow(t *testing.T) {
	home, ag := newAgent(t, "[model]\nallow = [\"other-model\"]\n")
	p := connect(t, home)
	parent := []any{"file-" + ag.ID}
	schedule := filepath.Join(home, "Link", "Agents", "ada", "Agent", "schedule")
	starts := func() int {
		es, _ := os.ReadDir(schedule)
		n := 0
		for _, e := range es {
			if strings.HasSuffix(e.Name(), ".json") {
				n++
			}
		}
		return n
	}
	for _, args := range []map[string]any{{"task": "look"}, {"task": "look", "model": "other-model"}} {
		out, isErr := p.call(meta("main", 0, parent, "gpt-unallowed"), "start_subagent", args)
		if !isErr || !strings.Contains(out, `link.local/model "gpt-unallowed"`) || !strings.Contains(out, "[model] allow") || !strings.Contains(out, "hint:") {
			t.Errorf("a parent on a model not allowed (%v): %q", args, out)
		}
	}
	if n := starts(); n != 0 {
		t.Fatalf("%d starts written for a refused parent's model", n)
	}

	for _, c := range []struct {
		meta string
		args map[string]any
		want string
	}{
		{caps.BuiltinModelName, map[string]any{"task": "look"}, caps.BuiltinModelName},
		{"other-model", map[string]any{"task": "look"}, "other-model"},
		{"other-model", map[string]any{"task": "look", "model": caps.BuiltinModelName}, caps.BuiltinModelName},
	} {
		out, isErr := p.call(meta("main", 0, parent, c.meta), "start_subagent", c.args)
		if isErr {
			t.Fatalf("parent on %s, %v: %q", c.meta, c.args, out)
		}
		if j := startedJob(t, home, out); j.Task == nil || j.Task.Model != c.want {
			t.Errorf("parent on %s, %v: started %+v, want model %s", c.meta, c.args, j.Task, c.want)
		}
	}
}
