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
