package textsafe

import (
	"bytes"
	"testing"
)

// TestWriterCleansAcrossWrites: a Writer removes an escape sequence and
// a bidi override cut across its Writes, keeps accents, an emoji (cut
// mid-rune too), tabs and newlines, and reports each Write whole.
func TestWriterCleansAcrossWrites(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	in := "café 🙂\t\x1b]0;pwned\x07\x1b[31mred\u202ex\n"
	for i := 0; i < len(in); i += 3 {
		p := []byte(in[i:min(i+3, len(in))])
		if n, err := w.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "café 🙂\tredx\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
