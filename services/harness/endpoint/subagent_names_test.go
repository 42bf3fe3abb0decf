package endpoint

import (
	"strings"
	"testing"
)

// TestSubagentHeadersNamesOneRule: Link-Tools and Link-Model take the
// names internal/toolname takes, the ones the harness offers and the
// scheduler and the way in take, and refuse the rest, saying why.
func TestSubagentHeadersNamesOneRule(t *testing.T) {
	s, err := parseSubagent(`["github","memory-0123456789abcdef0123456789abcdef"]`, []string{"anthropic/claude-3.5:beta"})
	if err != nil || len(s.Tools) != 2 || s.Model != "anthropic/claude-3.5:beta" {
		t.Fatalf("names that keep the rule: %+v %v", s, err)
	}
	for _, c := range []struct{ tools, model, want string }{
		{`["my.tool"]`, "", "a character a provider doesn't take"},
		{`["` + strings.Repeat("t", 62) + `"]`, "", "longer than 61"},
		{`["a__b"]`, "", `holds "__"`},
		{`["_a"]`, "", "starts with"},
		{`[]`, "modèle", "is no model's name"},
	} {
		var ms []string
		if c.model != "" {
			ms = []string{c.model}
		}
		if _, err := parseSubagent(c.tools, ms); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: %v, want %q", c.tools, c.model, err, c.want)
		}
	}
}
