package serve

import "testing"

// A stranger's message (a webhook's) and a teammate's reach no tool; the
// owner's, a schedule's, a background command's ending and a subagent's
// keep the agent's tools. The positive controls are the nil rows.
func TestStrangersAndTeammatesGetNoTools(t *testing.T) {
	for from, none := range map[string]bool{
		"":                          false,
		"schedule:daily":            false,
		"run:7f3a":                  false,
		"task-12":                   false,
		"stranger:webhook:deploys":  true,
		"agent-34b61358bf182ec06c2": true,
		"team-ops":                  true,
		"something-new":             true,
	} {
		got := toolsFor(from)
		if none && (got == nil || len(got) != 0) {
			t.Errorf("from %q: tools %v, want none", from, got)
		}
		if !none && got != nil {
			t.Errorf("from %q: tools %v, want the agent's own (nil)", from, got)
		}
	}
}
