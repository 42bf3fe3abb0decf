package query

import (
	"fmt"
	"regexp"
	"strings"
)

// GlobRegexp turns a glob into an anchored, case-insensitive regular
// expression: * is any run within one name, ** any run across names
// ("**/" also none), ? one character within a name, [...] a class ([!...]
// its complement), {a,b} either; every other character stands for
// itself.
func GlobRegexp(glob string) (string, error) {
	var b strings.Builder
	b.WriteString("(?is)^")
	depth := 0 // open {…} groups
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch {
		case c == '*' && i+1 < len(glob) && glob[i+1] == '*':
			i++
			if i+1 < len(glob) && glob[i+1] == '/' {
				i++
				b.WriteString("(?:.*/)?")
			} else {
				b.WriteString(".*")
			}
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(glob[i+1:], ']')
			if j < 0 {
				return "", fmt.Errorf("name: %w: [ without ]", ErrPattern)
			}
			if j == 0 { // "[]…]": a ] first is literal
				k := strings.IndexByte(glob[i+2:], ']')
				if k < 0 {
					return "", fmt.Errorf("name: %w: [ without ]", ErrPattern)
				}
				j = k + 1
			}
			class := glob[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		case c == '{':
			depth++
			b.WriteString("(?:")
		case c == '}' && depth > 0:
			depth--
			b.WriteString(")")
		case c == ',' && depth > 0:
			b.WriteString("|")
		case c == '\\' && i+1 < len(glob):
			i++
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	if depth != 0 {
		return "", fmt.Errorf("name: %w: { without }", ErrPattern)
	}
	b.WriteString("$")
	return b.String(), nil
}
