package query

import (
	"errors"
	"strings"
	"testing"
)

func TestGlobMatches(t *testing.T) {
	cases := []struct {
		glob, path string
		want       bool
	}{
		{"*.go", "a/b/main.go", true},
		{"*.GO", "main.go", true},
		{"*.go", "main.go.txt", false},
		{"ma?n.go", "main.go", true},
		{"m[a-c]in.go", "main.go", true},
		{"m[!a]in.go", "main.go", false},
		{"*.{md,txt}", "notes.TXT", true},
		{"src/*.go", "src/main.go", true},
		{"src/*.go", "src/a/main.go", false},
		{"src/**/*.go", "src/a/b/main.go", true},
		{"src/**/*.go", "src/main.go", true},
		{"**/x", "a/b/x", true},
		{"a.b", "axb", false},
		{"(x)", "(x)", true},
	}
	for _, c := range cases {
		q, err := Compile(c.glob, "")
		if err != nil {
			t.Fatalf("%q: %v", c.glob, err)
		}
		if got := q.MatchName(c.path); got != c.want {
			t.Errorf("glob %q on %q: got %v, want %v", c.glob, c.path, got, c.want)
		}
	}
}

func TestTextMatchesALine(t *testing.T) {
	q, err := Compile("", `func \w+\(`)
	if err != nil {
		t.Fatal(err)
	}
	if !q.MatchLine("func main() {") || q.MatchLine("var x = 1") {
		t.Fatal("the text pattern matched the wrong lines")
	}
	if !q.MatchName("anything") {
		t.Fatal("no name pattern should match every name")
	}
}

// TestHostilePatternsRefused: patterns whose programs would be large are
// refused before they are built, each with ErrTooLarge.
func TestHostilePatternsRefused(t *testing.T) {
	hostile := []string{
		`\pL{1000}`,
		`(?i)[\pL\pN]{1000}`,
		`(?i)(\pL|\pN){500}x{500}`,
		strings.Repeat("a", MaxPattern+1),
		`((((((((((a{100}){100}){100}))))))))`,
	}
	for _, p := range hostile {
		_, err := Compile("", p)
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("%.40q: got %v, want ErrTooLarge", p, err)
		}
	}
	if _, err := Compile("", `a{1000}`); err != nil {
		t.Errorf("a modest repeat was refused: %v", err)
	}
	if _, err := Compile("", `(`); !errors.Is(err, ErrPattern) {
		t.Errorf("a broken pattern: got %v, want ErrPattern", err)
	}
	if _, err := Compile("[abc", ""); !errors.Is(err, ErrPattern) {
		t.Errorf("a broken glob: got %v, want ErrPattern", err)
	}
}
