package textsafe

import (
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "hello world", "hello world"},
		{"escape sequence", "a\x1b[31mred\x1b[0m", "a[31mred[0m"},
		{"newline and carriage return", "one\ntwo\rthree", "onetwothree"},
		{"tab", "a\tb", "a b"},
		{"c1 control", "a\u0085b\u009bc", "abc"},
		{"del", "a\x7fb", "ab"},
		{"bidi override", "file\u202Etxt.exe", "filetxt.exe"},
		{"bidi isolate", "\u2066x\u2069", "x"},
		{"arabic letter mark", "a\u061cb", "ab"},
		{"zero width", "ad\u200bmin\u200d\ufeff", "admin"},
		{"line separator", "a\u2028b\u2029c", "abc"},
		{"tag characters", "a\U000E0041b", "ab"},
		{"invalid utf-8", "a\xffb", "a\ufffdb"},
		{"non-latin kept", "naïve 日本", "naïve 日本"},
		{"emoji kept", "café 🙂 ok", "café 🙂 ok"},
		// Characters that show nothing, so two names print alike.
		{"soft hyphen", "ca­fé", "café"},
		{"hangul filler", "adㅤminᅟ", "admin"},
		{"combining grapheme joiner", "a͏dmin", "admin"},
		{"interlinear annotation", "a￹b￺c￻", "abc"},
		{"invisible operator", "x⁢y", "xy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Line(tc.in); got != tc.want {
				t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzLine(f *testing.F) {
	f.Add("a\x1b[2Jb\u202e")
	f.Fuzz(func(t *testing.T, s string) {
		out := Line(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Line(%q) is not valid UTF-8", s)
		}
		for _, r := range out {
			if Refused(r) || r == '\t' {
				t.Fatalf("Line(%q) = %q keeps %U", s, out, r)
			}
		}
		if Line(out) != out {
			t.Fatalf("Line is not idempotent on %q", s)
		}
		if len(out) > 3*len(s) {
			t.Fatalf("Line grew %d bytes to %d", len(s), len(out))
		}
	})
}
