package memory

import (
	"strings"
	"unicode/utf8"
)

// chunkSize is about how many bytes of text one chunk of the index holds.
const chunkSize = 2048

// Split cuts text into chunks of at most chunkSize bytes (a single word
// longer than that is cut at a rune boundary), preferring a paragraph
// break, then a line break, then a space. Invalid UTF-8 is replaced;
// the chunks joined are the text.
func Split(text string) []string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	var out []string
	for len(text) > 0 {
		if len(text) <= chunkSize {
			out = append(out, text)
			break
		}
		cut := cutAt(text)
		out = append(out, text[:cut])
		text = text[cut:]
	}
	return out
}

// cutAt is where to end the next chunk of text (longer than chunkSize,
// valid UTF-8): after the last paragraph break in the second half of its
// first chunkSize bytes, else the last line break, else the last space,
// else at the last rune boundary. Always > 0.
func cutAt(text string) int {
	w := text[:chunkSize]
	half := len(w) / 2
	for _, sep := range []string{"\n\n", "\n", " "} {
		if i := strings.LastIndex(w, sep); i >= half {
			return i + len(sep)
		}
	}
	i := chunkSize
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	return i
}
