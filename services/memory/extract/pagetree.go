package extract

import (
	"fmt"

	"github.com/ledongthuc/pdf"
)

// Bounds of a PDF's page tree, checked before any page is read.
//
// maxTreeDepth: writers build the page tree balanced (or flat: one
// Pages node over every page), and a 32 MiB document holds fewer than
// 2^22 page objects (each takes more than 8 bytes), so even a binary
// tree of them is under 23 levels. 256 leaves room for a writer that
// nests the tree it had under a new root at each of its appends, and is
// still walked at once. The parser walks the tree (and a page's Parent
// chain, for what a page inherits) with no bound and no memory of where
// it has been, so a tree that holds itself loops it until the child's
// 30 s of CPU: past this depth the document is refused first.
//
// The check's own work is bounded by the document's size: it takes at
// most one step (a node resolved: the tree's, or one up a page's Parent
// chain) for each two bytes of the document, and minTreeSteps at least.
// A tree that reaches one node by many paths is walked by each, so a
// few hundred bytes could otherwise cost it billions of steps. A real
// page stands for more bytes than its steps: its own object and its
// content stream's (tens of bytes, even compressed) against a step for
// it, one for its place among its parent's kids and one for each level
// above it.
const (
	maxTreeDepth = 256
	minTreeSteps = 4096
)

// treeSteps is the most steps the check of doc's page tree may take.
func treeSteps(doc int) int { return max(minTreeSteps, doc/2) }

// pages is the pages of r in the document's order: the leaves (/Type
// /Page) of the page tree from the catalog's /Pages, walked by their
// /Kids as the parser walks them (a kid of another /Type is skipped, as
// the parser skips it). It refuses a tree, or a page's /Parent chain,
// deeper than maxTreeDepth (a cycle among them is deeper than any
// bound), and a walk of more than treeSteps(size) nodes, size the
// document's bytes.
//
// It resolves objects through r, so a malformed object panics as it
// would in the parser: the caller recovers.
func pages(r *pdf.Reader, size int) ([]pdf.Page, error) {
	root := r.Trailer().Key("Root").Key("Pages")
	if root.Key("Type").Name() != "Pages" {
		return nil, nil
	}
	steps, most := 0, treeSteps(size)
	step := func() error {
		if steps++; steps > most {
			return fmt.Errorf("not a PDF document read here: its page tree takes more than %d steps to walk, one for each two bytes of the document (nodes reached by many paths)", most)
		}
		return nil
	}
	type node struct {
		v     pdf.Value
		depth int
	}
	var out []pdf.Page
	stack := []node{{root, 1}}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if err := step(); err != nil {
			return nil, err
		}
		switch n.v.Key("Type").Name() {
		case "Pages":
			if n.depth > maxTreeDepth {
				return nil, fmt.Errorf("not a PDF document read here: its page tree is more than %d levels deep (a node of it is its own descendant, or a tree no PDF writer makes)", maxTreeDepth)
			}
			kids := n.v.Key("Kids")
			// Pushed last first, so the first kid is walked first.
			for i := kids.Len() - 1; i >= 0; i-- {
				if err := step(); err != nil {
					return nil, err
				}
				stack = append(stack, node{kids.Index(i), n.depth + 1})
			}
		case "Page":
			if err := parents(n.v, len(out)+1, step); err != nil {
				return nil, err
			}
			out = append(out, pdf.Page{V: n.v})
		}
	}
	return out, nil
}

// parents refuses page number num whose /Parent chain, which the parser
// walks for what a page inherits (its /Resources), is longer than
// maxTreeDepth: a cycle, or no tree a writer makes.
func parents(page pdf.Value, num int, step func() error) error {
	v := page.Key("Parent")
	for up := 1; !v.IsNull(); up++ {
		if up > maxTreeDepth {
			return fmt.Errorf("not a PDF document read here: page %d's chain of parents is more than %d long (a node of it is its own ancestor, or a tree no PDF writer makes)", num, maxTreeDepth)
		}
		if err := step(); err != nil {
			return err
		}
		v = v.Key("Parent")
	}
	return nil
}
