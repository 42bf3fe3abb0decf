package memory

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzSplit(f *testing.F) {
	f.Add("")
	f.Add("one line")
	f.Add(strings.Repeat("word ", 2000))
	f.Add(strings.Repeat("é", 3000))
	f.Add(strings.Repeat("x", 5000) + "\n\n" + strings.Repeat("y", 10))
	f.Add("\xff\xfe" + strings.Repeat("\U0001F600", 1500))
	f.Fuzz(func(t *testing.T, text string) {
		chunks := Split(text)
		valid := strings.ToValidUTF8(text, "\uFFFD")
		if got := strings.Join(chunks, ""); got != valid {
			t.Fatalf("chunks do not rejoin to the text")
		}
		for _, c := range chunks {
			if c == "" || len(c) > chunkSize || !utf8.ValidString(c) {
				t.Fatalf("bad chunk of %d bytes (valid %v)", len(c), utf8.ValidString(c))
			}
		}
	})
}
