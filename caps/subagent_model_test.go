package caps

import "testing"

// A subagent's model is the agent's own or one [model] allow names;
// nothing else, and an empty allow list gives the own model alone.
func TestSubagentModelAllowed(t *testing.T) {
	for _, c := range []struct {
		allow  []string
		own, m string
		want   bool
	}{
		{nil, "link-builtin", "", true},
		{nil, "link-builtin", "link-builtin", true},
		{nil, "link-builtin", "gpt-5", false},
		{[]string{"gpt-5"}, "link-builtin", "gpt-5", true},
		{[]string{"gpt-5"}, "link-builtin", "claude", false},
		{nil, "", "x", false},
	} {
		if got := SubagentModelAllowed(c.allow, c.own, c.m); got != c.want {
			t.Errorf("%v own %q: %q %v, want %v", c.allow, c.own, c.m, got, c.want)
		}
	}
}
