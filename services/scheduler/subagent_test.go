package scheduler

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/caps"
)

var startedID = regexp.MustCompile(`started subagent task-([0-9a-f]{16})`)

// meta is a call's _meta from a conversation with tools (nil: no
// link.local/tools at all) on model (""; none).
func meta(thread string, hops int, tools any, model string) mcp.Meta {
	m := in(thread, hops)
	if tools != nil {
		m["link.local/tools"] = tools
	}
	if model != "" {
		m["link.local/model"] = model
	}
	return m
}

// startedJob is the job start_subagent's answer names, read back.
func startedJob(t *testing.T, home, out string) *Job {
	t.Helper()
	m := startedID.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("start_subagent answered %q", out)
	}
	b, err := os.ReadFile(filepath.Join(home, "Link", "Agents", "ada", "Agent", "schedule", m[1]+".json"))
	if err != nil {
		t.Fatal(err)
	}
	j, err := ParseJob(b)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestStartSubagentOverMCP: a real MCP peer starts subagents through the
// real lnk-scheduler-tool. The subagent's tools are its parent
// conversation's (_meta link.local/tools) or fewer: the tools the call
// names, short or granted, within them; a tool the parent lacks is
// refused, never added; no _meta list gives the agent's whole list, and
// a list that isn't one is refused. Its model is the parent's (_meta
// link.local/model) unless the call names one [model] allow names;
// another is refused. Its hops are the call's and one, its start a job
// of the calling conversation's, due now.
func TestStartSubagentOverMCP(t *testing.T) {
	home, ag := newAgent(t, "[model]\nallow = [\"other-model\"]\n")
	p := connect(t, home)
	run, file, mem, sch := "run-"+ag.ID, "file-"+ag.ID, "memory-"+ag.ID, "scheduler-"+ag.ID
	parent := []any{file, sch}

	out, isErr := p.call(meta("main", 2, parent, "link-builtin"), "start_subagent", map[string]any{"task": "list files", "tools": []string{"file"}})
	j := startedJob(t, home, out)
	if isErr || j.Thread != "main" || j.Hops != 3 || j.Text != "list files" || j.Task == nil ||
		!slices.Equal(j.Task.Tools, []string{file}) || j.Task.Model != "link-builtin" || j.Cron != "" {
		t.Fatalf("the start read back: %+v %+v (%q)", j, j.Task, out)
	}
	// The parent lacks run: refused, whichever name the call gives it.
	for _, name := range []string{"run", run} {
		if out, isErr := p.call(meta("main", 0, parent, ""), "start_subagent", map[string]any{"task": "run ls", "tools": []string{"file", name}}); !isErr ||
			!strings.Contains(out, "is not among this conversation's tools") || !strings.Contains(out, "hint:") {
			t.Errorf("a tool the parent lacks (%s): %q", name, out)
		}
	}
	// None named: all of the parent's, never more.
	out, _ = p.call(meta("main", 0, parent, ""), "start_subagent", map[string]any{"task": "look"})
	if j := startedJob(t, home, out); !slices.Equal(j.Task.Tools, []string{file, sch}) || j.Task.Model != "" {
		t.Errorf("the parent's whole list: %+v", j.Task)
	}
	// No _meta list: the agent's whole list.
	out, _ = p.call(meta("main", 0, nil, ""), "start_subagent", map[string]any{"task": "look", "tools": []string{"memory"}})
	if j := startedJob(t, home, out); !slices.Equal(j.Task.Tools, []string{mem}) {
		t.Errorf("from the agent's whole list: %+v", j.Task)
	}
	// A _meta list that isn't one is refused, never read as none or all.
	for _, bad := range []any{"file", []any{file, 3}, map[string]any{}} {
		if out, isErr := p.call(meta("main", 0, bad, ""), "start_subagent", map[string]any{"task": "look"}); !isErr || !strings.Contains(out, "not a list of tool names") {
			t.Errorf("_meta tools %v: %q", bad, out)
		}
	}
	// Models: [model] allow's is taken, another refused.
	out, _ = p.call(meta("main", 0, parent, "link-builtin"), "start_subagent", map[string]any{"task": "look", "model": "other-model"})
	if j := startedJob(t, home, out); j.Task.Model != "other-model" {
		t.Errorf("an allowed model: %+v", j.Task)
	}
	if out, isErr := p.call(meta("main", 0, parent, "link-builtin"), "start_subagent", map[string]any{"task": "look", "model": "gpt-9"}); !isErr || !strings.Contains(out, "[model] allow") {
		t.Errorf("a model not allowed: %q", out)
	}
	// A fifth waiting start passes [tool.scheduler] subagents (4).
	if out, isErr := p.call(meta("main", 0, parent, ""), "start_subagent", map[string]any{"task": "look"}); !isErr || !strings.Contains(out, "4 subagents are waiting to start") {
		t.Errorf("a fifth: %q", out)
	}
	// Hop 7 of 8 starts none: its answer would be hop 9 (hop 6 starts
	// one: TestSubagentAtTheLastHopWithAnAnswer); a stranger's
	// conversation none.
	if out, isErr := p.call(meta("other", 7, parent, ""), "start_subagent", map[string]any{"task": "look"}); !isErr || !strings.Contains(out, "its answer hop 9") {
		t.Errorf("hop 7: %q", out)
	}
	if out, isErr := p.call(meta("webhook:gh", 0, parent, ""), "start_subagent", map[string]any{"task": "look"}); !isErr || !strings.Contains(out, "stranger") {
		t.Errorf("a stranger's conversation: %q", out)
	}
	// Its own list shows the waiting starts.
	if out, _ := p.call(in("main", 0), "list", map[string]any{}); !strings.Contains(out, "a subagent's start (task-"+j.ID+")") {
		t.Errorf("list: %q", out)
	}
}

// TestStartSubagentRefusedUnderAnotherHarness: an agent whose harness is
// not Link Harness (agent.toml's [start] command) gets no subagent: no
// other harness keeps a subagent's list. The same call under Link
// Harness starts one (TestStartSubagentOverMCP).
func TestStartSubagentRefusedUnderAnotherHarness(t *testing.T) {
	home, _ := newAgent(t, "")
	l := caps.Layout{Home: home}
	f, err := os.OpenFile(l.AgentFile("ada"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\n[start]\ncommand = [\"/usr/bin/openclaw\"]\n")
	f.Close()
	p := connect(t, home)
	out, isErr := p.call(meta("main", 0, []any{"file"}, ""), "start_subagent", map[string]any{"task": "look"})
	if !isErr || !strings.Contains(out, "can't keep a subagent's tool list") {
		t.Fatalf("under another harness: %q", out)
	}
	if ents, _ := os.ReadDir(filepath.Join(home, "Link", "Agents", "ada", "Agent", "schedule")); len(ents) != 0 {
		t.Fatalf("a start was written: %v", ents)
	}
}

// TestSubagentsJobsListedByTheirParent: a conversation lists and cancels
// its own jobs and its subagents' (those made in each task-<id> it
// started, and in theirs), never another conversation's or another's
// subagents'; the record of a started subagent is neither listed nor
// cancelled.
func TestSubagentsJobsListedByTheirParent(t *testing.T) {
	home, _ := newAgent(t, "")
	st, err := OpenStore(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Second)
	started := func(thread string) *Job {
		j := job(thread, "look", 1, now)
		j.Task = &Task{Tools: []string{}, Started: now}
		return j
	}
	sub := started("main")
	subsub := started(Subagent(sub.ID))
	other := started("other")
	mine, deeper, theirs := job(Subagent(sub.ID), "mine", 2, now.Add(time.Hour)), job(Subagent(subsub.ID), "deeper", 3, now.Add(time.Hour)), job(Subagent(other.ID), "theirs", 2, now.Add(time.Hour))
	for _, j := range []*Job{sub, subsub, other, mine, deeper, theirs} {
		if err := st.Write(j); err != nil {
			t.Fatal(err)
		}
	}
	p := connect(t, home)
	out, _ := p.call(in("main", 0), "list", map[string]any{})
	if !strings.Contains(out, mine.ID) || !strings.Contains(out, deeper.ID) || strings.Contains(out, theirs.ID) || strings.Contains(out, sub.ID+"  ") {
		t.Fatalf("main lists:\n%s", out)
	}
	if out, isErr := p.call(in("main", 0), "cancel", map[string]any{"id": theirs.ID}); !isErr || !strings.Contains(out, "no such job") {
		t.Errorf("another's subagent's job cancelled: %q", out)
	}
	if out, isErr := p.call(in("main", 0), "cancel", map[string]any{"id": sub.ID}); !isErr {
		t.Errorf("a started subagent's record cancelled: %q", out)
	}
	if out, isErr := p.call(in("main", 0), "cancel", map[string]any{"id": deeper.ID}); isErr {
		t.Errorf("its subagent's subagent's job: %q", out)
	}
	if out, _ := p.call(in("other", 0), "list", map[string]any{}); !strings.Contains(out, theirs.ID) || strings.Contains(out, mine.ID) {
		t.Errorf("other lists:\n%s", out)
	}
}

// TestStartedSubagentFiresOnce: a subagent's start fires once, and is
// then kept as the record of its parent for KeepStarted, firing no more;
// past that it is removed.
func TestStartedSubagentFiresOnce(t *testing.T) {
	home, _ := newAgent(t, "")
	st, err := OpenStore(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	j := job("main", "look", 1, now.Add(-time.Second))
	j.Task = &Task{Tools: []string{"file-1"}}
	st.Write(j)
	var handed []Message
	r := &Runner{Store: st, Zone: time.UTC, Now: func() time.Time { return now }, Logf: t.Logf,
		Hand: func(_ context.Context, m Message) error { handed = append(handed, m); return nil }}
	for i := 0; i < 2; i++ {
		if _, err := r.Fire(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(handed) != 1 || handed[0].From != Subagent(j.ID) || handed[0].Thread != Subagent(j.ID) || handed[0].Parent != "main" || !slices.Equal(handed[0].Task.Tools, []string{"file-1"}) {
		t.Fatalf("handed %+v", handed)
	}
	jobs, _ := st.List()
	if len(jobs) != 1 || !jobs[0].started() {
		t.Fatalf("kept %+v", jobs)
	}
	r.Now = func() time.Time { return now.Add(KeepStarted + time.Minute) }
	r.Fire(context.Background())
	if jobs, _ := st.List(); len(jobs) != 0 || len(handed) != 1 {
		t.Fatalf("after %v: %+v, handed %d", KeepStarted, jobs, len(handed))
	}
}

// TestSubagentAtTheLastHopWithAnAnswer: a turn at hop 6 of 8 starts a
// subagent at hop 7, whose answer is hop 8, within the cap: the control
// of TestStartSubagentOverMCP's hop-7 refusal.
func TestSubagentAtTheLastHopWithAnAnswer(t *testing.T) {
	home, ag := newAgent(t, "")
	p := connect(t, home)
	out, isErr := p.call(meta("main", 6, []any{"file-" + ag.ID}, ""), "start_subagent", map[string]any{"task": "look"})
	if j := startedJob(t, home, out); isErr || j.Hops != 7 {
		t.Fatalf("hop 6: %q %+v", out, j)
	}
}
