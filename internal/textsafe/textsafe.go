// Package textsafe makes untrusted text safe to print on the owner's
// terminal: it removes control characters (so no escape sequence reaches
// the terminal), bidi overrides and isolates (so a line cannot read
// backwards), and zero-width characters (so two different names cannot
// print the same). [Line] cleans one line; [Stream] cleans a stream (a
// harness's log) keeping newlines and tabs, and removes each escape
// sequence whole, across any cut of the stream.
//
// # Security
//
// It holds nothing and trusts nothing: every byte it is given may be
// hostile. Invalid UTF-8 becomes U+FFFD. It never lets through C0 or C1
// controls (tab aside, which [Line] turns into a space), DEL, U+2028 and
// U+2029, the bidi controls U+061C, U+200E, U+200F, U+202A–U+202E and
// U+2066–U+2069, the zero-width U+180E, U+200B–U+200D, U+2060–U+2064 and
// U+FEFF, the tag characters U+E0000–U+E007F, or any other character
// that shows nothing: every format character (soft hyphen, the invisible
// operators, the interlinear annotation marks, …), the default-ignorable
// letters (Hangul fillers, the combining grapheme joiner), the variation
// selectors and the noncharacters.
package textsafe

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Refused reports whether r is a character textsafe removes.
func Refused(r rune) bool {
	if r >= 0xa0 && invisible(r) {
		return true
	}
	switch {
	case r < 0x20 || r == 0x7f:
		return true
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x180e, r == 0xfeff:
		return true
	case r >= 0x200b && r <= 0x200f:
		return true
	case r >= 0x2028 && r <= 0x202e:
		return true
	case r >= 0x2060 && r <= 0x2069:
		return true
	case r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return false
}

// invisible reports the characters that show nothing and are no control:
// format characters, default-ignorable code points, variation selectors
// and noncharacters.
func invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) ||
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r) ||
		unicode.Is(unicode.Noncharacter_Code_Point, r)
}

// Line returns s as one printable line: tabs become spaces, every
// character [Refused] reports is removed (newlines too), and invalid
// UTF-8 becomes U+FFFD.
func Line(s string) string {
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || Refused(r) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\t':
			b.WriteByte(' ')
		case Refused(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
