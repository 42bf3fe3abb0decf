package builtin

import (
	"errors"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/toolname"
)

// TestOfferedNameIsToolnamesRule: a function's name is taken by
// internal/toolname's rule, the one Link Harness offers by: a name of
// toolname.MaxOffered letters, digits, '-' and '_' passes, as does a
// <tool>__<call> Link Harness joins; one byte more, an empty name, or a
// character outside the provider's set is refused naming the field and
// the limit.
func TestOfferedNameIsToolnamesRule(t *testing.T) {
	req := func(name string) []byte {
		return []byte(`{"messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":"` + name + `"}}]}`)
	}
	longest := strings.Repeat("t", toolname.MaxTool) + toolname.Sep + "c"
	for _, ok := range []string{"a", "web__fetch", "run-0a1b__run", longest, strings.Repeat("A", toolname.MaxOffered)} {
		if _, err := ParseRequest(req(ok)); err != nil {
			t.Errorf("name %q (%d bytes): %v", ok, len(ok), err)
		}
	}
	for _, bad := range []string{"", strings.Repeat("t", toolname.MaxOffered+1), "a b", "a.b", "a/b", "é"} {
		_, err := ParseRequest(req(bad))
		var re *RequestError
		if !errors.As(err, &re) || re.Param != "tools[0].function.name" || !strings.Contains(re.Message, "1 to 64 letters") {
			t.Errorf("name %q (%d bytes): %v", bad, len(bad), err)
		}
	}
}
