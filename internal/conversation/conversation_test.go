package conversation

import "testing"

// TestNotOwners: the owner's own conversations are taken; a teammate's,
// a team's, a subagent's, a sender-named one (a webhook's), an empty
// name and a path are not, each saying why.
func TestNotOwners(t *testing.T) {
	for _, th := range []string{"main", "work-1", "garden", "a.b_c"} {
		if why := NotOwners(th); why != "" {
			t.Errorf("%q: %s", th, why)
		}
	}
	for _, th := range []string{"", "agent-0123", "team-0123", "task-7", "webhook:ci", "stranger:x", "telegram:eve", "../main", "a/b"} {
		if why := NotOwners(th); why == "" {
			t.Errorf("%q taken as the owner's", th)
		}
	}
	if !Strangers("webhook:ci") || Strangers("main") || !Subagents("task-1") || Subagents("main") {
		t.Error("Strangers or Subagents")
	}
}

// TestMayStart: main, the owner's new one, a subagent's start and a
// sender's own conversation may be started; a schedule's firing, a
// command's ending, a subagent's answer to its parent, an owner's message
// without new, and a sender's message into another's, never.
func TestMayStart(t *testing.T) {
	for _, c := range []struct {
		from, thread string
		sub, asNew   bool
		want         bool
	}{
		{"", "main", false, false, true},
		{"schedule:0123", "main", false, false, true},
		{"", "work-1", false, true, true},
		{"task-7", "task-7", true, false, true},
		{"stranger:webhook:ci", "webhook:ci", false, false, true},
		{"agent-0123", "agent-0123", false, false, true},
		{"", "work-1", false, false, false},
		{"schedule:0123", "work-1", false, false, false},
		{"run:0123", "work-1", false, false, false},
		{"task-7", "work-1", false, false, false},
		{"task-7", "task-7", false, false, false},
		{"task-7", "task-8", true, false, false},
		{"stranger:webhook:ci", "webhook:cd", false, false, false},
		{"stranger:main2", "main2", false, false, false},
		{"agent-0123", "agent-4567", false, false, false},
		{"schedule:0123", "work-1", false, true, false},
	} {
		if got := MayStart(c.from, c.thread, c.sub, c.asNew); got != c.want {
			t.Errorf("MayStart(%q, %q, %v, %v) = %v, want %v", c.from, c.thread, c.sub, c.asNew, got, c.want)
		}
	}
}

// TestNotOthers: a stranger's message goes only into the conversation
// named as it; no other sender's into a stranger's; the rest are taken.
func TestNotOthers(t *testing.T) {
	for _, c := range []struct {
		from, thread string
		ok           bool
	}{
		{"stranger:webhook:ci", "webhook:ci", true},
		{"schedule:j", "main", true},
		{"run:aa", "work-1", true},
		{"task-7", "task-7", true},
		{"task-7", "main", true},
		{"stranger:webhook:ci", "main", false},
		{"stranger:webhook:ci", "webhook:cd", false},
		{"stranger:main", "main", false},
		{"schedule:j", "webhook:ci", false},
		{"run:aa", "telegram:eve", false},
		{"task-7", "webhook:ci", false},
		{"agent-01", "webhook:ci", false},
	} {
		if why := NotOthers(c.from, c.thread); (why == "") != c.ok {
			t.Errorf("NotOthers(%q, %q) = %q, want taken %v", c.from, c.thread, why, c.ok)
		}
	}
}
