package builtin

import (
	"errors"
	"strings"
)

// splitWords splits a command line into words as a POSIX shell does,
// without any expansion: blanks separate words; '…' keeps everything
// literally; "…" keeps everything but \" \\ \$ \` and \newline; a
// backslash outside quotes keeps the next character. Operators (| ; &
// > <) are words like any other: nothing here runs a shell.
func splitWords(line string) ([]string, error) {
	var words []string
	var b strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, b.String())
				b.Reset()
				inWord = false
			}
		case c == '\\':
			inWord = true
			if i+1 < len(line) {
				i++
				if line[i] != '\n' {
					b.WriteByte(line[i])
				}
			}
		case c == '\'':
			inWord = true
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("a single quote is never closed")
			}
			b.WriteString(line[i+1 : i+1+end])
			i += end + 1
		case c == '"':
			inWord = true
			closed := false
			for i++; i < len(line); i++ {
				if line[i] == '"' {
					closed = true
					break
				}
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`\n", line[i+1]) >= 0 {
					i++
					if line[i] != '\n' {
						b.WriteByte(line[i])
					}
					continue
				}
				b.WriteByte(line[i])
			}
			if !closed {
				return nil, errors.New("a double quote is never closed")
			}
		default:
			inWord = true
			b.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, b.String())
	}
	return words, nil
}
