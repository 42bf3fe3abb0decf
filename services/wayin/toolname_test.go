package wayin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/services/harness/store"
)

// TestSubagentNamesOneRule: a subagent's start naming a tool or a model
// Link Harness would refuse (internal/toolname) is refused by the way in
// itself, saying why, before it counts or reaches the harness (whose
// endpoint would refuse it by the same rule, later): nothing runs. The
// same start with names that keep the rule is taken, and its kept list
// read back.
func TestSubagentNamesOneRule(t *testing.T) {
	w := newWorld(t, defaults, false)
	for _, c := range []struct {
		task *Task
		want string
	}{
		{&Task{Parent: "main", Tools: []string{"my.tool"}}, `tool "my.tool" is no tool's name`},
		{&Task{Parent: "main", Tools: []string{strings.Repeat("t", 62)}}, "longer than 61 bytes"},
		{&Task{Parent: "main", Tools: []string{"a__b"}}, `holds "__"`},
		{&Task{Parent: "main", Tools: []string{}, Model: "modèle"}, "is no model's name"},
	} {
		_, err := w.send(Message{From: "task-ee", Thread: "task-ee", Text: "look", Hops: 1, Task: c.task})
		if err == nil || !strings.Contains(err.Error(), "a subagent's start: ") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "harness refused") {
			t.Errorf("%+v: %v, want %q", c.task, err, c.want)
		}
	}
	if w.events("task-ee") != nil || w.events("main") != nil {
		t.Fatal("a refused start reached the harness")
	}
	if _, err := w.send(Message{From: "task-ff", Thread: "task-ff", Text: "look", Hops: 1, Task: &Task{Parent: "main", Tools: []string{"github", "ok_tool-2"}}}); err != nil {
		t.Fatal(err)
	}
	w.waitAnswered("task-ff", 1)
	b, err := os.ReadFile(filepath.Join(w.cfg.AgentDir, "chats", "task-ff", store.SubagentFile))
	if err != nil || strings.TrimSpace(string(b)) != `{"tools":["github","ok_tool-2"]}` {
		t.Fatalf("the subagent's kept list: %s %v", b, err)
	}
}
