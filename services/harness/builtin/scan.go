package builtin

import (
	"regexp"
	"sort"
	"strings"
)

// The obedient scan's bounds: a line longer than maxInstructionLine is
// no instruction, and a request's scan reads at most scanBudget bytes
// (rules tried and JSON parsed, counted, never timed), so no context
// makes it slow; what lies past the budget is not read, the same for
// the same request.
const (
	maxInstructionLine = 4 << 10
	scanBudget         = 16 << 20
)

// scanner finds instructions anywhere in a context: the obedient way.
type scanner struct{ left int }

func newScanner() *scanner { return &scanner{left: scanBudget} }

// spend takes n bytes of the budget, or reports there are not enough.
func (sc *scanner) spend(n int) bool {
	if sc.left < n {
		sc.left = 0
		return false
	}
	sc.left -= n
	return true
}

// anywhere is every instruction found in text, in order, one a line at
// most: at a line's start (past quote and list marks), after a
// sentence's end, a colon or a semicolon, or after "please", "and",
// "then" or "now", the first of those that reads as one; when text is
// JSON (a tool's answer), in each of its strings instead, so an
// instruction escaped inside one is found as it would read.
func (sc *scanner) anywhere(text string) []*instruction {
	var out []*instruction
	texts := sc.jsonStrings(text)
	if texts == nil {
		texts = []string{text}
	}
	for _, s := range texts {
		for len(s) > 0 && sc.left > 0 {
			line := s
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				line, s = s[:i], s[i+1:]
			} else {
				s = ""
			}
			if len(line) > maxInstructionLine {
				continue
			}
			if in := sc.line(line); in != nil {
				out = append(out, in)
			}
		}
	}
	return out
}

var reJoin = regexp.MustCompile(`(?i)\b(?:please|and|then|now),?\s+`)

// line is the first instruction in line, by where it starts.
func (sc *scanner) line(line string) *instruction {
	if !sc.spend(len(line)) {
		return nil
	}
	starts := []int{len(line) - len(strings.TrimLeft(line, " \t>-*#\"'`"))}
	for i := 0; i+1 < len(line); i++ {
		if strings.IndexByte(".:;!?", line[i]) >= 0 && (line[i+1] == ' ' || line[i+1] == '\t') {
			starts = append(starts, i+1)
		}
	}
	for _, m := range reJoin.FindAllStringIndex(line, -1) {
		starts = append(starts, m[1])
	}
	sort.Ints(starts)
	for _, s := range starts {
		rest := strings.TrimLeft(line[s:], " \t\"'`")
		if !sc.spend(len(rest)) {
			return nil
		}
		if in := parseInstruction(rest); in != nil {
			return in
		}
	}
	return nil
}
