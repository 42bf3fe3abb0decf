package mcptext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// decodeCases are the texts of JSON strings (between the quotes) with
// every class of byte and escape DecodeString treats apart, valid and
// not: its seeds and TestDecodeStringIsEncodingJSONs' cases, each also
// tried at every offset around a word.
var decodeCases = []string{
	``, `a`, `plain ascii text of more than eight bytes`, `<&>`,
	`\"`, `\\`, `\/`, `\b\f\n\r\t`, `\u0000\u001f\u0041\u00e9\u20ac\uFFFD\uffff`, `\u2028\u2029`,
	`\ud83d\ude00`, `\uD83D\uDE00`, `\ud83d`, `\ude00`, `\ud83dx`, `\ud83d\u0041`, `\ud83d\ud83d\ude00`, `\ude00\ud83d`, `\ud83d\n`,
	"é", "😀", "\u2028", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xef\xbf\xbd", "\x7f",
	// refused
	"\x00", "\x1f", "\n", "a\tb", `\`, `\'`, `\a`, `\x41`, `\u`, `\u12`, `\u12g4`, `\U0041`, `\ud83d\u12`, `\ud83d\uzzzz`, `"`, `a"b`,
	"1234567\\n89", "12345678\"9", "1234567\xff", "1234567é\\u00e9", strings.Repeat("<p>a &amp; b</p>\\n", 40), strings.Repeat("ab\\\"cd\\\\ef", 5),
}

// decodeJSON is encoding/json's decoding of b into a string, and
// whether it took b: what DecodeString must give.
func decodeJSON(b []byte) (string, bool) {
	var s string
	err := json.Unmarshal(b, &s)
	return s, err == nil
}

// TestDecodeStringIsEncodingJSONs: DecodeString takes the strings
// encoding/json takes, no more, each to the same value and its end just
// past the closing quote, wherever it starts in a line and whatever
// follows it; refusals and acceptances both occur (the cases are real).
func TestDecodeStringIsEncodingJSONs(t *testing.T) {
	took, refused := 0, 0
	for _, c := range decodeCases {
		for pad := 0; pad < 9; pad++ {
			for _, text := range []string{strings.Repeat("x", pad) + c, c + strings.Repeat("y", pad)} {
				str := `"` + text + `"`
				want, wantOK := decodeJSON([]byte(str))
				line := []byte(`{"k":` + str + `,"after":"\"x"}`)
				got, end, ok := DecodeString(line, len(`{"k":`))
				ok = ok && end == len(`{"k":`)+len(str) // the whole of str one string, not a string ending inside it
				if ok != wantOK || (ok && got != want) {
					t.Errorf("%q: decoded %q %v, encoding/json %q %v", str, got, ok, want, wantOK)
					continue
				}
				if ok {
					took++
				} else {
					refused++
				}
			}
		}
	}
	if took == 0 || refused == 0 {
		t.Fatalf("took %d, refused %d: the cases do not test both", took, refused)
	}
	// Controls: the escapes are read, invalid UTF-8 replaced, a surrogate
	// pair joined, a lone one replaced.
	for in, want := range map[string]string{`"a\nb\"\u00e9"`: "a\nb\"é", "\"\xff1\"": "\ufffd1", `"\ud83d\ude00\ud83d!"`: "😀\ufffd!"} {
		if got, _, ok := DecodeString([]byte(in), 0); !ok || got != want {
			t.Errorf("%s: decoded %q %v, want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{``, `x`, `"`, `"abc`, `"abc\"`, "\"a\x01\""} {
		if got, _, ok := DecodeString([]byte(bad), 0); ok {
			t.Errorf("%q: decoded to %q, not refused", bad, got)
		}
	}
}

// TestDecodeStringRoundTrip: what AppendString writes, DecodeString
// reads back as encoding/json does (invalid UTF-8 as U+FFFD).
func TestDecodeStringRoundTrip(t *testing.T) {
	for _, c := range stringCases {
		enc := AppendString(nil, c)
		want, _ := decodeJSON(enc)
		if got, end, ok := DecodeString(enc, 0); !ok || got != want || end != len(enc) {
			t.Errorf("%q: read back %q %v (end %d of %d), encoding/json %q", c, got, ok, end, len(enc), want)
		}
	}
}

// FuzzDecodeString: a differential target against encoding/json's
// decoding into a string, on any bytes: the same strings taken, the
// same values; seeds in testdata/fuzz/FuzzDecodeString.
func FuzzDecodeString(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(`"` + c + `"`))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			if _, _, ok := DecodeString(b, 0); ok {
				t.Fatalf("%q: taken, not a string", b)
			}
			return
		}
		want, wantOK := decodeJSON(b)
		got, end, ok := DecodeString(b, 0)
		if ok {
			ok = len(bytes.TrimLeft(b[end:], " \t\r\n")) == 0 // one string, nothing after it, as json.Unmarshal takes
		}
		if ok != wantOK || (ok && got != want) {
			t.Fatalf("%q: decoded %q %v, encoding/json %q %v", b, got, ok, want, wantOK)
		}
	})
}

// BenchmarkDecodeString: a 100 KB page's text written as a JSON string
// (the text Link Web answers a page served as text with) decoded by
// DecodeString (link) and by encoding/json's json.Unmarshal into a
// string (base).
func BenchmarkDecodeString(b *testing.B) {
	var page strings.Builder
	for i := 0; page.Len() < 100<<10; i++ {
		page.WriteString("<h2>Section</h2><p>Some <b>text</b> with <a href=\"/p/1\">a link</a> and <code>code</code>, then more words to read in a paragraph of an ordinary length.</p>\n<ul><li>one</li><li>two — é</li></ul>\n")
	}
	enc := AppendString(nil, page.String())
	b.Run("link", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		for i := 0; i < b.N; i++ {
			if _, _, ok := DecodeString(enc, 0); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("base", func(b *testing.B) {
		b.SetBytes(int64(len(enc)))
		for i := 0; i < b.N; i++ {
			var s string
			if err := json.Unmarshal(enc, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
