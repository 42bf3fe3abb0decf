package mcptext

import (
	"bytes"
	"encoding/json"
	"math/bits"
	"strings"
	"testing"
)

// jsonString is encoding/json's bytes for s with HTML escaping off: what
// AppendString must write.
func jsonString(t testing.TB, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// stringCases hold every class of byte AppendString treats apart, each
// at every offset in a word and across a word's end.
var stringCases = []string{
	"", "a", "plain ascii text of more than eight bytes",
	`"`, `\`, "\x00", "\x1f", "\x7f", " ", "<&>", "\b\f\n\r\t\v\x01",
	"é", "😀", "\u2028", "\u2029", "\u2027\u202a", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
	"1234567\"89", "12345678\\9", "123456789\n", "1234567\xff", "1234567é", "1234567\u2028", "12345678\u2029",
	strings.Repeat("<p>a &amp; b</p>\n", 40), strings.Repeat("0123456\x00", 9), strings.Repeat("ab\"cd\\ef", 5),
}

// TestAppendStringIsEncodingJSONs: AppendString writes encoding/json's
// bytes (HTML escaping off) for every class of byte, at every offset
// around a word, after what dst held.
func TestAppendStringIsEncodingJSONs(t *testing.T) {
	for _, c := range stringCases {
		for pad := 0; pad < 9; pad++ {
			for _, s := range []string{strings.Repeat("x", pad) + c, c + strings.Repeat("y", pad)} {
				want := jsonString(t, s)
				got := AppendString([]byte("prefix:"), s)
				if string(got) != "prefix:"+string(want) {
					t.Errorf("%q: wrote %s, encoding/json %s", s, got[len("prefix:"):], want)
				}
			}
		}
	}
	// Control: the escapes are there (the test compares real encodings).
	if got := string(AppendString(nil, "<\"\\\n\x01\xff\u2028>")); got != `"<\"\\\n\u0001\ufffd\u2028>"` {
		t.Errorf("wrote %s", got)
	}
}

// TestNeedLook: a word's first byte marked is exactly its first byte
// that is not 0x20–0x7f less " and \, for each byte value at each
// place, with plain bytes or any other before it; a plain word marks none.
func TestNeedLook(t *testing.T) {
	if m := needLook(load64("abc<>&{~", 0)); m != 0 {
		t.Errorf("a plain word marked %#x", m)
	}
	for pos := 0; pos < 8; pos++ {
		for v := 0; v < 256; v++ {
			for _, after := range []byte{'a', 0, '"', 0xff} {
				w := []byte("abcdefgh")
				w[pos] = byte(v)
				for j := pos + 1; j < 8; j++ {
					w[j] = after
				}
				special := func(c byte) bool { return c < 0x20 || c >= 0x80 || c == '"' || c == '\\' }
				want := 8
				for j, c := range w {
					if special(c) {
						want = j
						break
					}
				}
				got := 8
				if m := needLook(load64(string(w), 0)); m != 0 {
					got = bits.TrailingZeros64(m) / 8
				}
				if got != want {
					t.Errorf("%q: first byte marked %d, want %d", w, got, want)
				}
			}
		}
	}
}

// FuzzAppendString: a differential target against encoding/json with
// HTML escaping off, on any bytes (invalid UTF-8 too); seeds in
// testdata/fuzz/FuzzAppendString.
func FuzzAppendString(f *testing.F) {
	for _, c := range stringCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := jsonString(t, s)
		if got := AppendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: wrote %s, encoding/json %s", s, got, want)
		}
	})
}

// BenchmarkAppendString: a 100 KB page's text (the HTML of an article,
// as Link Web gives a page served as text) written as a JSON string by
// AppendString (link) and by encoding/json with HTML escaping off (base).
func BenchmarkAppendString(b *testing.B) {
	var page strings.Builder
	for i := 0; page.Len() < 100<<10; i++ {
		page.WriteString("<h2>Section</h2><p>Some <b>text</b> with <a href=\"/p/1\">a link</a> and <code>code</code>, then more words to read in a paragraph of an ordinary length.</p>\n<ul><li>one</li><li>two — é</li></ul>\n")
	}
	s := page.String()
	b.Run("link", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		buf := make([]byte, 0, 2*len(s))
		for i := 0; i < b.N; i++ {
			buf = AppendString(buf[:0], s)
		}
	})
	b.Run("base", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for i := 0; i < b.N; i++ {
			buf.Reset()
			if err := enc.Encode(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
