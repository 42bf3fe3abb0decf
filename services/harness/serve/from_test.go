package serve

import (
	"slices"
	"testing"
)

// A stranger's message (a webhook's) reaches only the tools [tools]
// strangers names, none when it names none; a teammate's reaches no
// tool, strangers or not; the owner's, a schedule's, a background
// command's ending and a subagent's keep the agent's tools (nil).
func TestStrangersAndTeammatesGetNoTools(t *testing.T) {
	for _, strangers := range [][]string{nil, {"file-x"}} {
		for from, want := range map[string][]string{
			"":                          nil,
			"schedule:daily":            nil,
			"run:7f3a":                  nil,
			"task-12":                   nil,
			"stranger:webhook:deploys":  append([]string{}, strangers...),
			"agent-34b61358bf182ec06c2": {},
			"team-ops":                  {},
			"something-new":             {},
		} {
			got := toolsFor(from, strangers)
			if (got == nil) != (want == nil) || !slices.Equal(got, want) {
				t.Errorf("strangers %q, from %q: tools %#v, want %#v", strangers, from, got, want)
			}
		}
	}
}
