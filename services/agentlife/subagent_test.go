package agentlife

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/harness/store"
)

var startedTask = regexp.MustCompile(`started subagent (task-[0-9a-f]{16})`)

// startSubagent has the agent start a subagent (the built-in's
// "subagent [with tools …]: task" rule, the kernel's tool bridge,
// lnk-scheduler-tool) and returns its conversation.
func (w *world) startSubagent(say string) string {
	w.t.Helper()
	out := w.send(say)
	m := startedTask.FindStringSubmatch(out)
	if m == nil {
		w.t.Fatalf("%q answered:\n%s", say, out)
	}
	return m[1]
}

// told is the text of the message task sent its parent, main ("" none
// yet), once main answered it.
func (w *world) told(task string) string {
	if n, ok := w.answeredFrom("main", task); n == 0 || !ok {
		return ""
	}
	for _, e := range w.events("main") {
		if e.Kind == store.KindMessage && e.From == task {
			return e.Text
		}
	}
	return ""
}

// keptTools is the tool list a subagent's conversation keeps, read back.
func (w *world) keptTools(task string) []string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.home, "Link", "Agents", w.agent, "Agent", "chats", task, store.SubagentFile))
	if err != nil {
		w.t.Fatal(err)
	}
	var s store.Subagent
	if err := json.Unmarshal(b, &s); err != nil {
		w.t.Fatal(err)
	}
	return s.Tools
}

// TestSubagentsEndToEnd: lnk agent start, Link Harness in its sandbox
// with the built-in model, the kernel's tool bridge and the real
// scheduler, run, file and memory tools. The agent starts subagents from
// its conversation; each runs in its own conversation, keeping the
// tools its start named (read back), and its answer comes back to main
// once, from task-<id>:
//   - with file, it lists files (the positive control);
//   - with file alone, "run ls" finds no run offered: it never had it;
//   - with file and the scheduler, its own subagent asking for run is
//     refused by the scheduler: its conversation's _meta tools lack run;
//   - with memory, remember is refused in task-<id> and the notes keep
//     nothing of it.
//
// Then, with [tool.scheduler] subagents = 1, a subagent started while
// another runs is refused at the way in, logged, and main is told.
func TestSubagentsEndToEnd(t *testing.T) {
	w := linkWorld(t, "parent")
	w.mustLnk("agent", "start", w.agent)
	file, sch := "file-"+w.id, "scheduler-"+w.id
	lists := w.startSubagent("subagent with tools file: list files")
	noRun := w.startSubagent("subagent with tools file: run ls")
	nested := w.startSubagent("subagent with tools file, scheduler: subagent with tools run: list files")
	notes := w.startSubagent("subagent with tools memory: remember the sky is green")
	for _, task := range []string{lists, noRun, nested, notes} {
		w.waitFor(task+"'s answer told to main", func() bool { return w.told(task) != "" })
		if n, _ := w.answeredFrom("main", task); n != 1 {
			t.Fatalf("%s told main %d times", task, n)
		}
	}
	if got := w.keptTools(lists); !slices.Equal(got, []string{file}) {
		t.Errorf("%s keeps %q", lists, got)
	}
	if got := w.keptTools(nested); !slices.Equal(got, []string{file, sch}) {
		t.Errorf("%s keeps %q", nested, got)
	}
	for _, c := range []struct{ task, want string }{
		{lists, "file answered:"},
		{noRun, "I have no tool run__command here"},
		{nested, `tool "run" is not among this conversation's tools (` + file + ", " + sch + ")"},
		{notes, "remember writes your notes only in a conversation of your owner's: this conversation is a subagent's (" + notes + ")"},
	} {
		if got := w.told(c.task); !strings.HasPrefix(got, "The subagent's answer:\n") || !strings.Contains(got, c.want) {
			t.Errorf("%s told main:\n%s\nwant %q", c.task, got, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.home, "Link", "Agents", w.agent, "Agent", "memory", "notes.md")); strings.Contains(string(b), "sky is green") {
		t.Errorf("a subagent's remember reached the notes: %s", b)
	}

	// At most one subagent at once: one kept running (tail -f), the next
	// refused.
	sf, err := os.OpenFile(caps.Layout{Home: w.home}.SandboxFile(w.agent), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	sf.WriteString("\n[tool.scheduler]\nsubagents = 1\n")
	sf.Close()
	busy := w.startSubagent("subagent with tools run: run tail -f /dev/null")
	w.waitFor(busy+" running", func() bool { return len(w.events(busy)) > 0 })
	late := w.startSubagent("subagent with tools file: list files")
	w.waitFor(late+"'s refusal told to main", func() bool { return w.told(late) != "" })
	if got := w.told(late); !strings.Contains(got, "The subagent was not started: 1 subagents are running, the most at once ([tool.scheduler] subagents = 1)") {
		t.Errorf("main was told:\n%s", got)
	}
	if !strings.Contains(w.log(), "1 subagents are running, the most at once") {
		t.Errorf("the refusal was not logged:\n%s", w.log())
	}
	if evs := w.events(late); len(evs) != 0 {
		t.Errorf("the refused subagent ran: %+v", evs)
	}
}
