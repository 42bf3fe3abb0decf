package config

import (
	"strings"
	"testing"
)

// TestNamesOneRule: config.json's tools, model and models keep
// internal/toolname's rule, the one the harness offers tools by: a name
// that breaks it is refused saying why; Link's own tools' granted names
// and provider-shaped models are taken (the positive controls).
func TestNamesOneRule(t *testing.T) {
	ok := sample()
	ok.Tools["scheduler-"+strings.Repeat("ab", 16)] = "LNK_TOOL_SCHED"
	ok.Models = []string{"anthropic/claude-3.5:beta"}
	if err := ok.Check(); err != nil {
		t.Fatalf("names that keep the rule: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"a dotted tool", func(c *Config) { c.Tools["my.tool"] = "LNK_TOOL_MY" }, "is no tool's name"},
		{"a tool past 61", func(c *Config) { c.Tools[strings.Repeat("t", 62)] = "LNK_TOOL_T" }, "longer than 61"},
		{"a model past ASCII", func(c *Config) { c.Model.Model = "modèle" }, "is no model's name"},
		{"an allowed model with a space", func(c *Config) { c.Models = []string{"gpt 4"} }, "is no model's name"},
	} {
		c := sample()
		tc.edit(c)
		if err := c.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
