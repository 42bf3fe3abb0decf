package mdliteral

import (
	"testing"

	"lnk.dev/lnk/internal/mdliteral/mdtest"
)

// FuzzLiteral: whatever a page holds, as a block or a span between
// words of Link's own, makes nothing live when rendered.
func FuzzLiteral(f *testing.F) {
	for _, s := range hostile {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if l := mdtest.Render("Note:\n" + Block(s) + "End."); !l.Empty() {
			t.Fatalf("Block(%q) made live: %+v", s, l)
		}
		if l := mdtest.Render("Title: " + Span(s) + "\nURL: " + Span(s+"x") + "\n"); !l.Empty() {
			t.Fatalf("Span(%q) made live: %+v", s, l)
		}
	})
}
