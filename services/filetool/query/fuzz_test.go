package query

import (
	"errors"
	"regexp"
	"testing"
)

// FuzzCompile: any glob and text either compile into a Query that can be
// matched, or are refused with one of the package's two errors; a glob's
// expression always parses when it is returned.
func FuzzCompile(f *testing.F) {
	f.Add("*.go", `func \w+`)
	f.Add("src/**/*.{md,txt}", "")
	f.Add("[!a]?", `\pL{1000}`)
	f.Fuzz(func(t *testing.T, glob, text string) {
		q, err := Compile(glob, text)
		if err != nil {
			if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrPattern) {
				t.Fatalf("an error of no known kind: %v", err)
			}
			return
		}
		if expr, gerr := GlobRegexp(glob); gerr == nil {
			if _, perr := regexp.Compile(expr); perr != nil && glob != "" {
				t.Fatalf("glob %q compiled to %q, which does not parse", glob, expr)
			}
		}
		q.MatchName("a/b/" + glob)
		q.MatchLine(text)
	})
}
