package turn

import (
	"strings"
)

// lineBreaks are the breaks a reader may take to start a line, each made
// \n before quoting: \r\n and \r (Markdown's line endings), Unicode's
// other mandatory breaks (\v, \f, NEL, LS, PS) and the separators some
// splitters break at (FS, GS, RS). Split at \n alone, a \r in others'
// words would start a line of theirs unquoted.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\v", "\n", "\f", "\n",
	"\x1c", "\n", "\x1d", "\n", "\x1e", "\n", "\u0085", "\n", "\u2028", "\n", "\u2029", "\n")

// quoteLines is text with each line quoted ("> "), wherever it breaks
// (lineBreaks), so none of it reads as a paragraph of the one who quotes
// it.
func quoteLines(text string) string {
	var b strings.Builder
	for i, l := range strings.Split(lineBreaks.Replace(text), "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("> ")
		b.WriteString(l)
	}
	return b.String()
}

// fromOthers is a message from others as the model reads it: who speaks,
// then each of its lines quoted.
func fromOthers(from, text string) string {
	return "A message from " + cleanName(from) + ", not from the owner; each line of it is quoted:\n" + quoteLines(text)
}

// toolAnswerText is a tool's answer written into the text, in a turn that
// offers no tool: which tool answered, not the owner, each line quoted.
func toolAnswerText(tool, call, text string) string {
	return "The tool " + cleanName(tool) + " answered the call " + cleanName(call) + " (the tool's words, not the owner's; each line is quoted):\n" + quoteLines(text)
}

// cleanName keeps a name on one line.
func cleanName(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// cut keeps at most n bytes of s, at a rune's start, and says whether it cut.
func cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n], true
}
