package mdliteral

import (
	"strings"
	"unicode/utf8"
)

// longestRun is the length of the longest run of backticks in s.
func longestRun(s string) int {
	longest := 0
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			return longest
		}
		s = s[i:]
		run := 1
		for run < len(s) && s[run] == '`' {
			run++
		}
		longest = max(longest, run)
		s = s[run:]
	}
}

// validUTF8 is s with each invalid byte U+FFFD: s itself, uncopied, when
// it is valid (utf8.ValidString checks it a word at a time).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Block is text as a fenced code block, on lines of its own: an opening
// fence of at least three backticks and longer than any run of them in
// text (no line of text can close it, and a fence of backticks takes no
// backtick after it), text, and the closing fence. Its lines end in
// "\n"; text's trailing newlines are dropped.
func Block(text string) string {
	var b strings.Builder
	WriteBlock(&b, text)
	return b.String()
}

// WriteBlock writes [Block] of text to b, text copied once.
func WriteBlock(b *strings.Builder, text string) {
	text = strings.TrimRight(validUTF8(text), "\r\n")
	n := max(3, longestRun(text)+1)
	b.Grow(len(text) + 2*n + 3)
	writeFence(b, n)
	if text != "" {
		b.WriteString(text)
		b.WriteByte('\n')
	}
	writeFence(b, n)
}

// writeFence writes a line of n backticks.
func writeFence(b *strings.Builder, n int) {
	for range n {
		b.WriteByte('`')
	}
	b.WriteByte('\n')
}

// Span is s, made one line (each run of white space one space), as a
// code span: a run of backticks longer than any in s on each side, with
// a space between it and s (which CommonMark takes off again, and which
// lets s begin or end with a backtick). Empty s is "".
func Span(s string) string {
	s = strings.Join(strings.Fields(validUTF8(s)), " ")
	if s == "" {
		return ""
	}
	d := strings.Repeat("`", longestRun(s)+1)
	return d + " " + s + " " + d
}
