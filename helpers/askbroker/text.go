package askbroker

import (
	"strings"
	"unicode/utf8"

	"lnk.dev/lnk/internal/textsafe"
)

// Limits on a question's text as it is shown.
const (
	// MaxLineRunes is where each line of a question is cut.
	MaxLineRunes = 600
	// MaxLines is how many lines of one field are kept.
	MaxLines = 40
)

// CutNote is the line a question cut short carries: allowing it allows
// what the owner can't see.
const CutNote = "[this question was cut short: allowing it allows what is not shown]"

// Forbidden reports whether r may never appear in a cleaned question
// (a newline may: it separates its lines): textsafe's Refused, which
// holds every control, bidi, zero-width and other invisible character.
func Forbidden(r rune) bool {
	return textsafe.Refused(r) && r != '\n'
}

// Clean returns s as it may be shown: newlines kept (CR LF, CR, U+2028
// and U+2029 become one), tabs made spaces, every control, bidi,
// zero-width and other invisible character removed, invalid UTF-8 made
// U+FFFD, each line cut at [MaxLineRunes] characters and at most
// [MaxLines] lines kept. cut reports that something was cut. Clean of its
// own output changes nothing.
func Clean(s string) (out string, cut bool) {
	s = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u2028", "\n", "\u2029", "\n").Replace(s)
	lines := strings.Split(s, "\n")
	if len(lines) > MaxLines {
		lines, cut = lines[:MaxLines], true
	}
	for i, l := range lines {
		l = textsafe.Line(l)
		if utf8.RuneCountInString(l) > MaxLineRunes {
			n := 0
			for j := range l {
				if n == MaxLineRunes {
					l = l[:j]
					break
				}
				n++
			}
			cut = true
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n"), cut
}

// EscapeMarkup escapes s for a dialog that reads Pango or Qt rich text
// (kdialog), so none of the question's text becomes markup.
func EscapeMarkup(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(s)
}
