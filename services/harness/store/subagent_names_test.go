package store

import (
	"strings"
	"testing"
)

// TestParseSubagentNamesOneRule: a kept subagent.json names tools and a
// model by internal/toolname's rule; one that breaks it is refused when
// read (the turn never runs on it), one that keeps it is read back.
func TestParseSubagentNamesOneRule(t *testing.T) {
	if s, err := ParseSubagent([]byte(`{"tools":["github","ok_tool-2"],"model":"gpt-4o"}`)); err != nil || len(s.Tools) != 2 || s.Model != "gpt-4o" {
		t.Fatalf("names that keep the rule: %+v %v", s, err)
	}
	for _, b := range []string{
		`{"tools":["my.tool"]}`,
		`{"tools":["` + strings.Repeat("t", 62) + `"]}`,
		`{"tools":["a--b"]}`,
		`{"tools":[],"model":"modèle"}`,
	} {
		if _, err := ParseSubagent([]byte(b)); err == nil || !strings.Contains(err.Error(), "subagent.json: ") {
			t.Errorf("%s: %v", b, err)
		}
	}
}
