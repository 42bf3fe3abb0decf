// Package query is find's one Query: what lnk-file-tool's find builds from
// its arguments, used for a walk on disk now and through the files bridge
// later. name is a glob made a regular expression, matched in any case
// against a file's name, or against its path below the folder searched
// when the glob holds a "/"; text is a regular expression of one line.
//
// # Security
//
// Holds nothing. Trusts nothing of its input: both patterns are the
// agent's. Refuses a pattern longer than [MaxPattern] bytes, one that does
// not parse, and one whose compiled program would pass [MaxCompiled]
// bytes ([ErrTooLarge]), so a hostile pattern (a large counted repeat of a
// large class) is refused before it is built. Go's regular expressions
// match in time linear in the input, so a pattern that compiles within
// the cap cannot make a match run away.
package query

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

const (
	// MaxCompiled is the most a compiled pattern may take, in bytes.
	MaxCompiled = 1 << 20
	// MaxPattern is the longest pattern taken, in bytes.
	MaxPattern = 4096
)

// The refusals, told apart with errors.Is.
var (
	ErrTooLarge = errors.New("the pattern compiles past 1 MiB")
	ErrPattern  = errors.New("not a valid pattern")
)

// Query is one find: a name pattern, a text pattern, or both. The zero
// Query matches every file.
type Query struct {
	// Name matches a file's name, or its path below the folder searched
	// when NameIsPath; nil matches every name.
	Name       *regexp.Regexp
	NameIsPath bool
	// Text matches a line of a file; nil asks for names only.
	Text *regexp.Regexp
}

// Compile builds a Query from find's arguments: a glob and a regular
// expression, either of which may be empty.
func Compile(glob, text string) (Query, error) {
	var q Query
	if glob != "" {
		expr, err := GlobRegexp(glob)
		if err != nil {
			return Query{}, err
		}
		if q.Name, err = compile("name", expr); err != nil {
			return Query{}, err
		}
		q.NameIsPath = strings.Contains(glob, "/")
	}
	if text != "" {
		var err error
		if q.Text, err = compile("text", text); err != nil {
			return Query{}, err
		}
	}
	return q, nil
}

// MatchName reports whether the file at rel (its path below the folder
// searched) matches the name pattern.
func (q Query) MatchName(rel string) bool {
	if q.Name == nil {
		return true
	}
	if q.NameIsPath {
		return q.Name.MatchString(rel)
	}
	return q.Name.MatchString(rel[strings.LastIndexByte(rel, '/')+1:])
}

// MatchLine reports whether one line matches the text pattern.
func (q Query) MatchLine(line string) bool { return q.Text == nil || q.Text.MatchString(line) }

// compile parses expr, measures its program and only then builds it.
func compile(what, expr string) (*regexp.Regexp, error) {
	if len(expr) > MaxPattern {
		return nil, fmt.Errorf("%s: %w (longer than %d bytes)", what, ErrTooLarge, MaxPattern)
	}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		if isTooLarge(err) {
			return nil, fmt.Errorf("%s: %w", what, ErrTooLarge)
		}
		return nil, fmt.Errorf("%s: %w: %v", what, ErrPattern, err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, ErrTooLarge)
	}
	if n := Size(prog); n > MaxCompiled {
		return nil, fmt.Errorf("%s: %w (%d KiB)", what, ErrTooLarge, n>>10)
	}
	r, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %v", what, ErrPattern, err)
	}
	return r, nil
}

// instBytes is what one syntax.Inst takes on a 64-bit machine: Op (1),
// Out and Arg (4 each, padded) and the Rune slice header (24).
const instBytes = 40

// Size is the bytes a compiled program takes: its instructions and the
// runes of their classes.
func Size(p *syntax.Prog) int {
	n := 0
	for _, in := range p.Inst {
		n += instBytes + 4*len(in.Rune)
	}
	return n
}

func isTooLarge(err error) bool {
	var se *syntax.Error
	return errors.As(err, &se) && (se.Code == syntax.ErrLarge || se.Code == syntax.ErrNestingDepth || se.Code == syntax.ErrInvalidRepeatSize)
}
