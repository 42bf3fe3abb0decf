package textsafe

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestStream: whole escape sequences go (not only their ESC), newlines
// and tabs stay, other controls and bad UTF-8 are removed or replaced,
// and an unterminated sequence hides no more than the rest of its line.
func TestStream(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text\n", "plain text\n"},
		{"\x1b[31mred\x1b[0m\tok\n", "red\tok\n"},
		{"a\x1b[?1049hb", "ab"},
		{"title\x1b]0;pwned\x07 after\n", "title after\n"},
		{"link \x1b]8;;http://x\x1b\\text\x1b]8;;\x1b\\\n", "link text\n"},
		{"dcs \x1bP+q\x1b\\ end", "dcs  end"},
		{"charset \x1b(Bx", "charset x"},
		{"c1 csi \u009b31mx \u009d0;t\u009cy", "c1 csi x y"},
		{"cr\roverwrite\bback\x00nul\x7fdel", "croverwritebacknuldel"},
		{"bidi \u202eevil\u2066 zw\u200b", "bidi evil zw"},
		{"bad \xff\xfe utf8", "bad \ufffd\ufffd utf8"},
		{"open \x1b]0;never closed\nnext line\n", "open \nnext line\n"},
		{"csi cut \x1b[12\nnext", "csi cut \nnext"},
		{"can \x1b[12\x18x", "can x"},
		{"\x1b[" + strings.Repeat("1", MaxSequence+10) + "m", strings.Repeat("1", 12) + "m"}, // ESC [ and MaxSequence-2 digits hidden,
	} {
		if got := string(Clean([]byte(c.in))); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// streamOK checks what Stream wrote: valid UTF-8, nothing Refused but
// newlines and tabs.
func streamOK(t *testing.T, in, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Fatalf("invalid UTF-8 out of %q: %q", in, out)
	}
	for _, r := range string(out) {
		if r != '\n' && r != '\t' && Refused(r) {
			t.Fatalf("%U left in %q (from %q)", r, out, in)
		}
	}
	if bytes.Count(out, []byte("\n")) != bytes.Count(in, []byte("\n")) {
		t.Fatalf("newlines lost: %q from %q", out, in)
	}
}

// FuzzStream: any bytes clean to valid, printable UTF-8 with every
// newline kept, and the same whether written whole or cut at any point.
func FuzzStream(f *testing.F) {
	f.Add([]byte("\x1b[31mred\x1b[0m\n"), 3)
	f.Add([]byte("\x1b]0;t\x07x\u009b1m\xe2\x82"), 8)
	f.Add([]byte("\xe2\x82\xac\n\x1bP\x1b\\"), 1)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		whole := Clean(in)
		streamOK(t, in, whole)
		if cut < 0 {
			cut = -cut
		}
		if len(in) > 0 {
			cut %= len(in) + 1
		} else {
			cut = 0
		}
		var s Stream
		parts := s.Write(nil, in[:cut])
		parts = s.Write(parts, in[cut:])
		parts = s.Flush(parts)
		if !bytes.Equal(parts, whole) {
			t.Fatalf("cut at %d: %q, whole: %q (in %q)", cut, parts, whole, in)
		}
	})
}
