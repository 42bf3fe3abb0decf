// Package mdtest is for tests: it renders Markdown as a client that shows
// a tool's answer would (goldmark, CommonMark with GitHub's extensions:
// autolinks of bare URLs and www., tables), raw HTML let through, and
// says what the rendering would make live: each link's target, each
// image's source, and each raw HTML element or block. Nothing in it runs
// outside tests.
package mdtest

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Live is what a rendering makes live.
type Live struct {
	Links  []string // the targets of links and autolinks
	Images []string // the sources of images
	HTML   []string // raw HTML, inline or a block
}

// Empty reports whether nothing is live.
func (l Live) Empty() bool { return len(l.Links) == 0 && len(l.Images) == 0 && len(l.HTML) == 0 }

var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// Render parses src as a client would and lists what is live in it.
func Render(src string) Live {
	b := []byte(src)
	var l Live
	doc := md.Parser().Parse(text.NewReader(b))
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			l.Links = append(l.Links, string(n.Destination))
		case *ast.AutoLink:
			l.Links = append(l.Links, string(n.URL(b)))
		case *ast.Image:
			l.Images = append(l.Images, string(n.Destination))
		case *ast.RawHTML:
			var s bytes.Buffer
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				s.Write(seg.Value(b))
			}
			l.HTML = append(l.HTML, s.String())
		case *ast.HTMLBlock:
			var s bytes.Buffer
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				s.Write(seg.Value(b))
			}
			l.HTML = append(l.HTML, s.String())
		}
		return ast.WalkContinue, nil
	})
	return l
}
