package web

import (
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// A page's pruned tree can be made markdown in two halves, one on each
// of the conversion gate's two slots, when the second slot is free
// ([Web.toMarkdown]). The halves are cut only where the converter's
// whole-tree passes see nothing cross the cut, so that the two halves'
// markdown joined by a blank line is byte for byte the markdown of the
// whole (FuzzSplitConvert holds it there, at every cut this file would
// make, against the whole tree's conversion).

// minSplit is the least a page's text holds, in bytes, before it is cut:
// a smaller page is converted whole, the second goroutine not worth its
// start.
const minSplit = 16 << 10

// wrappers are the elements the converter renders as their children set
// apart by blank lines (its fallback for a block it has no rule for):
// the cut may go inside them, each half given its own copy of them.
var wrappers = map[atom.Atom]bool{
	atom.Main: true, atom.Div: true, atom.Article: true, atom.Section: true,
}

// cutBefore are the elements a half may begin with: blocks the converter
// renders apart from what precedes them.
var cutBefore = map[atom.Atom]bool{
	atom.P: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
}

// cutAfter are the elements the first half may end with.
var cutAfter = map[atom.Atom]bool{
	atom.P: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Ul: true, atom.Ol: true,
}

// splitBody finds where doc's body can be cut in two near its middle:
// the element that begins the second half, or nil where the page is
// small or offers no cut. It changes nothing.
func splitBody(doc *html.Node) *html.Node {
	cuts, weights, total := splitPoints(doc)
	if total < minSplit {
		return nil
	}
	best, bestGap := (*html.Node)(nil), total
	for i, c := range cuts {
		gap := weights[i] - total/2
		if gap < 0 {
			gap = -gap
		}
		if gap < bestGap {
			best, bestGap = c, gap
		}
	}
	return best
}

// splitPoints lists every place doc's body can be cut, each as the
// element beginning the second half, with the text bytes before it, and
// the text bytes of the whole body.
func splitPoints(doc *html.Node) (cuts []*html.Node, before []int, total int) {
	box := container(doc)
	if box == nil {
		return nil, nil, 0
	}
	var prev *html.Node // the last element child passed, whitespace between skipped
	for c := box.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode && blank(c.Data):
			continue
		case c.Type == html.ElementNode && cutBefore[c.DataAtom] && c.Namespace == "" &&
			prev != nil && cutAfter[prev.DataAtom] && prev.Namespace == "" && leadsWithText(c):
			cuts, before = append(cuts, c), append(before, total)
		}
		if c.Type == html.ElementNode {
			prev = c
		} else {
			prev = nil
		}
		total += textBytes(c)
	}
	return cuts, before, total
}

// container is the element whose children are cut between: the body, or
// the one wrapper it holds alone (and so on down), or nil where the
// document has no body.
func container(doc *html.Node) *html.Node {
	body := find(doc, atom.Body)
	if body == nil {
		return nil
	}
	for {
		var only *html.Node
		for c := body.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode && blank(c.Data) {
				continue
			}
			if only != nil || c.Type != html.ElementNode {
				return body
			}
			only = c
		}
		if only == nil || !wrappers[only.DataAtom] || only.Namespace != "" {
			return body
		}
		body = only
	}
}

// find is the first element under n (html, then its children) of atom a,
// looked for at the top two levels only, where the parser puts a body.
func find(n *html.Node, a atom.Atom) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || c.DataAtom != atom.Html {
			continue
		}
		for d := c.FirstChild; d != nil; d = d.NextSibling {
			if d.Type == html.ElementNode && d.DataAtom == a {
				return d
			}
		}
	}
	return nil
}

// leadsWithText reports whether n's first child is text holding more
// than white space: then the converter's walks forward from what
// precedes n (list-end marks, merged or spaced neighbours) stop inside
// n, and its walks back from n's words stop at them.
func leadsWithText(n *html.Node) bool {
	c := n.FirstChild
	return c != nil && c.Type == html.TextNode && !blank(c.Data)
}

// blank reports whether s is only the white space html-to-markdown
// collapses: space, tab, line feed and carriage return (not form feed,
// which it keeps as text).
func blank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}

// textBytes is the length of the text under n, walked without recursion.
func textBytes(n *html.Node) int {
	if n.Type == html.TextNode {
		return len(n.Data)
	}
	total := 0
	stack := []*html.Node{n}
	for len(stack) > 0 {
		m := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for c := m.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				total += len(c.Data)
			} else if c.FirstChild != nil {
				stack = append(stack, c)
			}
		}
	}
	return total
}

// cut moves at and every sibling after it out of doc into a document of
// their own, inside copies of the elements that held them (html, body
// and the wrappers, their attributes copied), and returns that document.
func cut(at *html.Node) *html.Node {
	var chain []*html.Node // at's ancestors, innermost first, the document last
	for p := at.Parent; p != nil; p = p.Parent {
		chain = append(chain, p)
	}
	top := &html.Node{Type: html.DocumentNode}
	parent := top
	for i := len(chain) - 2; i >= 0; i-- {
		p := chain[i]
		c := &html.Node{Type: p.Type, DataAtom: p.DataAtom, Data: p.Data, Namespace: p.Namespace, Attr: append([]html.Attribute(nil), p.Attr...)}
		parent.AppendChild(c)
		parent = c
	}
	from := at.Parent
	for c := at; c != nil; {
		next := c.NextSibling
		from.RemoveChild(c)
		parent.AppendChild(c)
		c = next
	}
	return top
}

// joinHalves is the markdown of a page cut in two: each half's, set
// apart by a blank line as the converter sets blocks apart.
func joinHalves(first, second []byte) []byte {
	switch {
	case len(first) == 0:
		return second
	case len(second) == 0:
		return first
	}
	out := make([]byte, 0, len(first)+2+len(second))
	out = append(out, first...)
	out = append(out, '\n', '\n')
	return append(out, second...)
}
