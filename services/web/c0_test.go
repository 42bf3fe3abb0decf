package web

import (
	"bytes"
	"strings"
	"testing"
)

// hasC0Cases hold each C0 control and the three kept at every offset
// around a word, with UTF-8 around them and a byte past 0x80 beside.
func hasC0Cases() [][]byte {
	var out [][]byte
	for c := 0; c < 0x20; c++ {
		for at := 0; at < 17; at++ {
			b := []byte(strings.Repeat("aé", 9))
			b[at] = byte(c)
			out = append(out, b)
		}
	}
	return append(out, nil, []byte("plain words\twith a tab\r\n"), []byte("\x7f\x80\xff ~ "), []byte(" !\"#$%&'()*+,-./0123456789"))
}

// TestHasC0Control: hasC0Control says what bytes.IndexFunc with
// c0Control says, for every C0 control at every offset of two words
// (the kept tab, newline and CR among them: the control cases).
func TestHasC0Control(t *testing.T) {
	found, none := 0, 0
	for _, b := range hasC0Cases() {
		want := bytes.IndexFunc(b, c0Control) >= 0
		if got := hasC0Control(b); got != want {
			t.Errorf("%q: hasC0Control %v, IndexFunc %v", b, got, want)
		}
		if want {
			found++
		} else {
			none++
		}
	}
	if found == 0 || none == 0 {
		t.Fatalf("%d cases hold a control, %d none: both kinds are needed", found, none)
	}
}

func FuzzHasC0Control(f *testing.F) {
	for _, b := range hasC0Cases() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := hasC0Control(b), bytes.IndexFunc(b, c0Control) >= 0; got != want {
			t.Fatalf("%q: hasC0Control %v, IndexFunc %v", b, got, want)
		}
	})
}
