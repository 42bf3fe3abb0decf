package askbroker

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Every kind of character that hides or turns text, by name.
var hiddenChars = map[string]string{
	"bell": "\a", "backspace": "\b", "escape": "\x1b",
	"vertical tab": "\v", "form feed": "\f", "del": "\x7f", "nul": "\x00",
	"c1 next line": "\u0085", "c1 csi": "\u009b", "c1 osc": "\u009d",
	"lrm": "\u200e", "rlm": "\u200f", "alm": "\u061c",
	"lre": "\u202a", "rle": "\u202b", "pdf": "\u202c", "lro": "\u202d", "rlo": "\u202e",
	"lri": "\u2066", "rli": "\u2067", "fsi": "\u2068", "pdi": "\u2069",
	"zwsp": "\u200b", "zwnj": "\u200c", "zwj": "\u200d", "word joiner": "\u2060",
	"invisible times": "\u2062", "bom": "\ufeff", "mongolian vowel sep": "\u180e",
	"soft hyphen": "\u00ad", "hangul filler": "\u3164", "halfwidth hangul filler": "\uffa0",
	"combining grapheme joiner": "\u034f", "variation selector 16": "\ufe0f",
	"variation selector 17": "\U000E0100", "tag a": "\U000E0041", "interlinear anchor": "\ufff9",
}

func TestCleanRemovesEveryHidingCharacter(t *testing.T) {
	for name, c := range hiddenChars {
		t.Run(name, func(t *testing.T) {
			got, cut := Clean("rm -rf /" + c + "tmp/x" + c)
			if got != "rm -rf /tmp/x" || cut {
				t.Errorf("Clean kept %U: %q (cut %v)", []rune(c)[0], got, cut)
			}
		})
	}
	for r := rune(0); r < 0xa0; r++ {
		if r == '\n' || r == '\r' || r >= 0x20 && r < 0x7f {
			continue
		}
		got, _ := Clean("a" + string(r) + "b")
		if want := "ab"; r == '\t' {
			want = "a b"
			if got != want {
				t.Errorf("tab: %q", got)
			}
		} else if got != want {
			t.Errorf("Clean kept control %U: %q", r, got)
		}
	}
}

func TestCleanLines(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		cut            bool
	}{
		{"plain", "tools/call write_file", "tools/call write_file", false},
		{"newlines kept", "a\nb", "a\nb", false},
		{"crlf and separators", "a\r\nb\rc\u2028d\u2029e", "a\nb\nc\nd\ne", false},
		{"invalid utf-8", "a\xffb", "a\ufffdb", false},
		{"non-latin kept", "naïve 日本 مرحبا", "naïve 日本 مرحبا", false},
		{"600 exactly", strings.Repeat("x", 600), strings.Repeat("x", 600), false},
		{"601 cut", strings.Repeat("é", 601), strings.Repeat("é", 600), true},
		{"too many lines", strings.Repeat("l\n", MaxLines+5), strings.TrimSuffix(strings.Repeat("l\n", MaxLines), "\n"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := Clean(tc.in)
			if got != tc.want || cut != tc.cut {
				t.Errorf("Clean(%q) = %q, %v; want %q, %v", tc.in, got, cut, tc.want, tc.cut)
			}
		})
	}
}

func TestTenThousandCharacterLine(t *testing.T) {
	q := &Question{What: "mcp call", Sandbox: "s", Call: "write " + strings.Repeat("A", 10000) + "\nsecond line", Allow: "lnk agent allow --tool t"}
	q.Clean()
	lines := strings.Split(q.Call, "\n")
	if len(lines) != 2 || utf8.RuneCountInString(lines[0]) != MaxLineRunes || lines[1] != "second line" {
		t.Fatalf("call not cut at %d: %d lines, first %d long", MaxLineRunes, len(lines), len(lines[0]))
	}
	if !q.Cut || !strings.Contains(q.Text(), CutNote) {
		t.Fatalf("a question cut short must say so:\n%s", q.Text())
	}
}

func TestEscapeMarkup(t *testing.T) {
	got := EscapeMarkup(`<b>yes</b> & "it's"`)
	if want := "&lt;b&gt;yes&lt;/b&gt; &amp; &quot;it&#39;s&quot;"; got != want {
		t.Errorf("EscapeMarkup = %q, want %q", got, want)
	}
}

func FuzzClean(f *testing.F) {
	for _, c := range hiddenChars {
		f.Add("x" + c + "y\n")
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := Clean(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Clean(%q) is not valid UTF-8", s)
		}
		for _, r := range out {
			if Forbidden(r) {
				t.Fatalf("Clean(%q) = %q keeps %U", s, out, r)
			}
		}
		for _, l := range strings.Split(out, "\n") {
			if utf8.RuneCountInString(l) > MaxLineRunes {
				t.Fatalf("a line of %d characters", utf8.RuneCountInString(l))
			}
		}
		if again, cut := Clean(out); again != out || cut {
			t.Fatalf("Clean is not idempotent on %q: %q then %q", s, out, again)
		}
	})
}
