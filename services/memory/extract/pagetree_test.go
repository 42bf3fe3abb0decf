package extract

import (
	"strings"
	"testing"
)

// The checks before any page (the opening's reads, then the page tree
// through the parser's objects) read the document's bytes: whatever they
// are, they end within their bounds with the pages or an error, never a
// panic, and the pages passed each
// have a chain of parents within maxTreeDepth, so the parser's walk up
// it ends. The seeds in testdata are named for what they hold (a real
// writer's three pages, a tree holding itself, a cycle of two nodes, a
// page its own parent, a tree too deep and one just under the bound, a
// node reached by 2^40 paths (past the steps of its bytes) and one by
// 2^3, a cross-reference table its own /Prev); TestPageTreeSeeds says
// what each must give.
func FuzzPageTree(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte) {
		all, err := pdfPages(doc)
		if err != nil {
			if all != nil {
				t.Fatalf("pages beside an error: %d %v", len(all), err)
			}
			return
		}
		if len(all) == 0 || len(all) > treeSteps(len(doc)) {
			t.Fatalf("%d pages passed", len(all))
		}
		for i, p := range all {
			up := 0
			for v := p.V.Key("Parent"); !v.IsNull(); v = v.Key("Parent") {
				if up++; up > maxTreeDepth {
					t.Fatalf("page %d passed with a chain of parents past %d", i+1, maxTreeDepth)
				}
			}
		}
	})
}

// TestPageTreeSeeds: a tree that holds itself, by one node or two, a
// page that is its own parent, a tree past the depth bound and one
// reached by too many paths are each refused with their reason, before
// a page is read, and a cross-reference table that is its own /Prev
// while the file is opened; a real writer's three pages, a tree just under the
// depth bound and a small shared one are read, every page's text.
func TestPageTreeSeeds(t *testing.T) {
	for _, c := range []struct{ seed, refused, text string }{
		{"loop", "page tree is more than 256 levels deep", ""},
		{"cycle", "page tree is more than 256 levels deep", ""},
		{"parentloop", "page 1's chain of parents is more than 256 long", ""},
		{"deep", "page tree is more than 256 levels deep", ""},
		{"shared", "page tree takes more than 4096 steps to walk", ""},
		{"prevloop", "cross-reference sections take more reading than twice the document", ""},
		{"multipage", "", "persimmon page\n\n\n\ntangerine page\n\n\n\nkumquat page\n"},
		{"deepok", "", "kumquat"},
		{"sharedok", "", strings.Repeat("\nkumquat\n", 8)},
	} {
		text, err := Pdf(seedBytes(t, "testdata/fuzz/FuzzPageTree/"+c.seed))
		switch {
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%s: %q %v, want refused: %s", c.seed, text, err, c.refused)
		case c.refused == "" && (err != nil || !strings.Contains(text, c.text)):
			t.Errorf("%s: %q %v, want %q", c.seed, text, err, c.text)
		}
	}
}
