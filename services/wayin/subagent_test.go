package wayin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/harness/store"
)

// TestSubagentAnswerReachesItsParentOnce: a subagent's start, handed with
// its tool list, runs in its own conversation (which keeps the list, read
// back), and its answer reaches the conversation that started it as one
// message from task-<id>, one hop past its task, quoted by the harness
// as from others; once, whatever else happens after.
func TestSubagentAnswerReachesItsParentOnce(t *testing.T) {
	w := newWorld(t, defaults, false)
	if _, err := w.send(Message{From: "task-aa", Thread: "task-aa", Text: "look into it", Hops: 2, Task: &Task{Parent: "main", Tools: []string{}}}); err != nil {
		t.Fatal(err)
	}
	w.waitAnswered("task-aa", 1)
	evs := w.waitAnswered("main", 1)
	n := 0
	for _, e := range evs {
		if e.Kind == store.KindMessage {
			n++
			if e.From != "task-aa" || e.Hops != 3 || !strings.HasPrefix(e.Text, "The subagent's answer:\n") || !strings.Contains(e.Text, "look into it") {
				t.Errorf("the parent got %+v", e)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(w.cfg.AgentDir, "chats", "task-aa", store.SubagentFile))
	if err != nil || strings.TrimSpace(string(b)) != `{"tools":[]}` {
		t.Fatalf("the subagent's kept list: %s %v", b, err)
	}
	time.Sleep(300 * time.Millisecond)
	if n != 1 || w.messagesFrom("main", "task-aa") != 1 {
		t.Fatalf("the parent got %d messages from the subagent, want 1", w.messagesFrom("main", "task-aa"))
	}
}

// TestSubagentWithoutListRefused: a subagent's message with no tool list
// (a harness that can't keep one is never sent one), or with an answer
// bound for a stranger's conversation, is refused and reaches nothing;
// another sender's message can't carry a list. The same start with its
// list is taken (TestSubagentAnswerReachesItsParentOnce).
func TestSubagentWithoutListRefused(t *testing.T) {
	w := newWorld(t, defaults, false)
	for _, c := range []struct {
		m    Message
		want string
	}{
		{Message{From: "task-aa", Thread: "task-aa", Text: "x", Hops: 1}, "carries no tool list"},
		{Message{From: "task-aa", Thread: "task-aa", Text: "x", Hops: 1, Task: &Task{Parent: "main"}}, "carries no tool list"},
		{Message{From: "task-aa", Thread: "task-aa", Text: "x", Hops: 1, Task: &Task{Parent: "webhook:gh", Tools: []string{}}}, "never goes to a stranger's conversation"},
		{Message{From: "task-aa", Thread: "task-aa", Text: "x", Hops: 1, Task: &Task{Parent: "telegram:eve", Tools: []string{}}}, "never goes to a stranger's conversation"},
		{Message{From: "schedule:j", Thread: "main", Text: "x", Hops: 1, Task: &Task{Parent: "main", Tools: []string{}}}, "only a subagent's start"},
	} {
		if _, err := w.send(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.m, err, c.want)
		}
	}
	if w.events("task-aa") != nil || w.events("main") != nil {
		t.Fatal("a refused message reached the harness")
	}
}

// TestSubagentCapToldToParent: a subagent's start refused by
// [tool.scheduler] subagents is told to the conversation that started
// it, as from the subagent, so the model knows it never ran.
func TestSubagentCapToldToParent(t *testing.T) {
	w := newWorld(t, caps.SchedulerLimits{Hops: 8, PerDay: 100, Subagents: 1}, true)
	if _, err := w.send(Message{From: "task-aa", Thread: "task-aa", Text: "look", Hops: 1, Task: &Task{Parent: "main", Tools: []string{}}}); err != nil {
		t.Fatal(err)
	}
	_, err := w.send(Message{From: "task-bb", Thread: "task-bb", Text: "look", Hops: 1, Task: &Task{Parent: "main", Tools: []string{}}})
	if err == nil || !strings.Contains(err.Error(), "1 subagents are running, the most at once") {
		t.Fatalf("the second: %v", err)
	}
	w.open()
	evs := w.waitAnswered("main", 2)
	var told []string
	for _, e := range evs {
		if e.Kind == store.KindMessage {
			told = append(told, e.From+": "+strings.SplitN(e.Text, "\n", 2)[0])
		}
	}
	if len(told) != 2 || !strings.Contains(strings.Join(told, "|"), "task-bb: The subagent was not started: 1 subagents are running") {
		t.Fatalf("the parent was told %q", told)
	}
	if w.events("task-bb") != nil {
		t.Fatal("the refused subagent ran")
	}
}

// TestSubagentRefusedByTheHarnessToldToParent: a subagent's start the
// real harness refuses before taking it (more tools than the harness
// takes in Link-Tools: its 400, a refusal by a rule as its 403 and 404
// are) is refused to the caller and
// told to the conversation that started it, once, as from the subagent,
// with the harness's reason; the subagent's conversation is never made.
// A start the harness takes is told its answer (the control,
// TestSubagentAnswerReachesItsParentOnce).
func TestSubagentRefusedByTheHarnessToldToParent(t *testing.T) {
	w := newWorld(t, defaults, false)
	_, err := w.send(Message{From: "task-cc", Thread: "task-cc", Text: "look", Hops: 1, Task: &Task{Parent: "main", Tools: manyTools(257)}})
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("the start: %v, want the harness's refusal", err)
	}
	evs := w.waitAnswered("main", 1)
	var told []string
	for _, e := range evs {
		if e.Kind == store.KindMessage {
			told = append(told, e.From+": "+e.Text)
		}
	}
	if len(told) != 1 || !strings.HasPrefix(told[0], "task-cc: The subagent was not started: the agent's harness refused the message (400)") || !strings.Contains(told[0], "names more than 256 tools") {
		t.Fatalf("the parent was told %q", told)
	}
	time.Sleep(300 * time.Millisecond)
	if n := w.messagesFrom("main", "task-cc"); n != 1 {
		t.Fatalf("the parent was told %d times, want once", n)
	}
	if w.events("task-cc") != nil {
		t.Fatal("the refused subagent's conversation was made")
	}
	// The control: a start the harness takes.
	if _, err := w.send(Message{From: "task-dd", Thread: "task-dd", Text: "look", Hops: 1, Task: &Task{Parent: "main", Tools: []string{}}}); err != nil {
		t.Fatal(err)
	}
	w.waitAnswered("task-dd", 1)
}

// TestEndingNeverToAStranger: a subagent's ending is refused into any
// conversation named as its sender (internal/conversation's rule), a
// webhook's or another kind's; the control, into main, is handed.
func TestEndingNeverToAStranger(t *testing.T) {
	for _, th := range []string{"webhook:gh", "telegram:eve", "x:y"} {
		if err := checkEnding(Message{From: "task-aa", Thread: th, Text: "x", Hops: 2}, 8); err == nil || !strings.Contains(err.Error(), "stranger's conversation") {
			t.Errorf("an ending into %s: %v", th, err)
		}
	}
	if err := checkEnding(Message{From: "task-aa", Thread: "main", Text: "x", Hops: 2}, 8); err != nil {
		t.Fatalf("an ending into main: %v", err)
	}
}

// manyTools is n tool names that each keep the rule of a tool's name.
func manyTools(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("tool-%d", i)
	}
	return out
}
