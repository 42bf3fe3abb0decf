package prompt

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDescribe feeds a SKILL.md's head, which the agent may have written,
// to the description the prompt takes: one line, valid UTF-8, at most
// MaxDescription bytes and an ellipsis.
func FuzzDescribe(f *testing.F) {
	f.Add("---\nname: x\ndescription: Fills forms.\n---\nbody")
	f.Add("# Title\n\nfirst line\n")
	f.Add("---\ndescription:\n---")
	f.Add("---\n\x1b[31m\x00description: \xff\xfe\n")
	f.Fuzz(func(t *testing.T, head string) {
		d := describe(cleanText([]byte(head)))
		if strings.ContainsAny(d, "\n\r\x00\x1b") || !utf8.ValidString(d) || len(d) > MaxDescription+len("…") {
			t.Fatalf("description %q", d)
		}
	})
}
