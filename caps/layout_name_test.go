package caps

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzNameOK: the loop CheckName uses accepts exactly what the pattern
// it replaced, ^[A-Za-z0-9_.-]{1,64}$, accepts.
func FuzzNameOK(f *testing.F) {
	for _, s := range []string{"main", "my-bot.2", "", ".", "..", "a b", "é", strings.Repeat("a", 64), strings.Repeat("a", 65), "a\x00"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := nameOK(s), re.MatchString(s); got != want {
			t.Fatalf("nameOK(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
