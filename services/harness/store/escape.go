package store

import (
	"strings"

	"lnk.dev/lnk/internal/textsafe"
)

// opensBlock reports whether the line l would start a heading, HTML or
// a code fence in Markdown, itself or inside the quotes and list items
// it opens with: its first character past those is '#' or '<', it
// opens a fence (``` or ~~~), or it is a setext underline (only '=',
// only '-'), which would make the line before it a heading.
func opensBlock(l string) bool {
	s := l
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return false
		}
		if underline(s) {
			return true
		}
		switch c := s[0]; {
		case c == '#', c == '<':
			return true
		case strings.HasPrefix(s, "```"), strings.HasPrefix(s, "~~~"):
			return true
		case c == '>':
			s = s[1:]
		case (c == '-' || c == '+' || c == '*') && len(s) > 1 && (s[1] == ' ' || s[1] == '\t'):
			s = s[2:]
		case c >= '0' && c <= '9':
			i := 0
			for i < len(s) && i < 10 && s[i] >= '0' && s[i] <= '9' {
				i++
			}
			if i == len(s) || (s[i] != '.' && s[i] != ')') {
				return false
			}
			s = s[i+1:]
			if s != "" && s[0] != ' ' && s[0] != '\t' {
				return false
			}
		default:
			return false
		}
	}
}

// underline reports whether s (no spaces before it) is only '=' or only
// '-', spaces after it aside.
func underline(s string) bool {
	s = strings.TrimRight(s, " \t")
	return s != "" && (strings.Trim(s, "=") == "" || strings.Trim(s, "-") == "")
}

// cleanLine removes what textsafe removes from a line (control
// characters, bidi and zero-width ones), tabs kept.
func cleanLine(l string) string {
	var b strings.Builder
	for _, part := range strings.Split(l, "\t") {
		b.WriteString(textsafe.Line(part))
		b.WriteByte('\t')
	}
	out := b.String()
	return out[:len(out)-1]
}

// escapeName makes a name (a sender's, a tool's, the agent's) one line
// of plain text in a heading: control characters removed, every ASCII
// punctuation mark backslash-escaped, at most 200 bytes kept.
func escapeName(s string) string {
	s = strings.TrimSpace(textsafe.Line(s))
	if len(s) > 200 {
		s = s[:200]
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "(no name)"
	}
	return b.String()
}
