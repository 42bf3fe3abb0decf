package mdliteral

import "strings"

// longestRun is the length of the longest run of backticks in s.
func longestRun(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// Block is text as a fenced code block, on lines of its own: an opening
// fence of at least three backticks and longer than any run of them in
// text (no line of text can close it, and a fence of backticks takes no
// backtick after it), text, and the closing fence. Its lines end in
// "\n"; text's trailing newlines are dropped.
func Block(text string) string {
	text = strings.TrimRight(strings.ToValidUTF8(text, "\uFFFD"), "\r\n")
	f := strings.Repeat("`", max(3, longestRun(text)+1))
	if text == "" {
		return f + "\n" + f + "\n"
	}
	return f + "\n" + text + "\n" + f + "\n"
}

// Span is s, made one line (each run of white space one space), as a
// code span: a run of backticks longer than any in s on each side, with
// a space between it and s (which CommonMark takes off again, and which
// lets s begin or end with a backtick). Empty s is "".
func Span(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if s == "" {
		return ""
	}
	d := strings.Repeat("`", longestRun(s)+1)
	return d + " " + s + " " + d
}
