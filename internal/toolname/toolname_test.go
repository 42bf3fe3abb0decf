package toolname

import (
	"regexp"
	"strings"
	"testing"
)

// A tool's name is refused for each rule with its reason, and taken
// when it keeps them all (the positive controls).
func TestToolNames(t *testing.T) {
	for _, c := range []struct {
		name string
		why  string // a word of the reason; "" taken
	}{
		{"github", ""},
		{"memory-0123456789abcdef0123456789abcdef", ""},
		{"a_b-c9", ""},
		{"Z", ""},
		{strings.Repeat("a", MaxTool), ""},
		{strings.Repeat("a", MaxTool+1), "longer than 61"},
		{strings.Repeat("a", 256), "longer than 61"},
		{"", "no name"},
		{"my.tool", "character"},
		{"my tool", "character"},
		{"tool\n", "character"},
		{"outil-é", "character"},
		{"-x", "starts with"},
		{"_x", "starts with"},
		{"a--b", `"--"`},
		{"a-", `ends with "-"`},
		{"a__b", `"__"`},
		{"a_", `ends with "_"`},
	} {
		got := ToolRefusal(c.name)
		if (got == "") != (c.why == "") || !strings.Contains(got, c.why) {
			t.Errorf("ToolRefusal(%q) = %q, want one saying %q", c.name, got, c.why)
		}
		if err := CheckTool(c.name); (err == nil) != (c.why == "") {
			t.Errorf("CheckTool(%q) = %v", c.name, err)
		}
	}
	if err := CheckTools([]string{"a", "b.c"}); err == nil || !strings.Contains(err.Error(), `"b.c"`) {
		t.Errorf("CheckTools names the bad name: %v", err)
	}
	if err := CheckTools([]string{}); err != nil {
		t.Errorf("an empty list: %v", err)
	}
}

// A model's name is 1 to 256 bytes of printable ASCII without a space.
func TestModelNames(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"gpt-4o-mini", true},
		{"anthropic/claude-3.5:beta@2024", true},
		{strings.Repeat("m", MaxModel), true},
		{strings.Repeat("m", MaxModel+1), false},
		{"", false},
		{"my model", false},
		{"m\x7f", false},
		{"modèle", false},
		{"m\r\nX-Injected: 1", false},
	} {
		if got := ModelRefusal(c.name) == ""; got != c.ok {
			t.Errorf("ModelRefusal(%q) taken = %v, want %v", c.name, got, c.ok)
		}
		if err := CheckModel(c.name); (err == nil) != c.ok {
			t.Errorf("CheckModel(%q) = %v", c.name, err)
		}
	}
}

var (
	toolShape  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	modelShape = regexp.MustCompile(`^[\x21-\x7e]{1,256}$`)
)

// FuzzNames holds the rules to a second reading of them: a tool's name
// is taken exactly when it has a provider's shape, fits with "__" and a
// call within 64, and splits back from an offer one way; a model's name
// exactly when it is 1 to 256 bytes of printable ASCII without a space.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"github", "a__b", "a--b", "my.tool", "", "-x", strings.Repeat("a", 62), "gpt-4o", "m\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		offered := s + Sep + "x"
		want := toolShape.MatchString(s) && len(offered) <= MaxOffered &&
			!strings.Contains(s, "--") && !strings.Contains(s, "__") &&
			!strings.HasSuffix(s, "-") && !strings.HasSuffix(s, "_")
		if got := ToolRefusal(s) == ""; got != want {
			t.Fatalf("ToolRefusal(%q) taken = %v, want %v", s, got, want)
		}
		if want && strings.SplitN(offered, Sep, 2)[0] != s {
			t.Fatalf("%q does not split back from its offer", s)
		}
		if got := ModelRefusal(s) == ""; got != modelShape.MatchString(s) {
			t.Fatalf("ModelRefusal(%q) taken = %v", s, got)
		}
	})
}
