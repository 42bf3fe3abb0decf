package web

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// dropped are the elements left out of a page with all they hold:
// nothing on a page runs, nothing is loaded, no form is offered.
var dropped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Img: true, atom.Picture: true, atom.Source: true, atom.Svg: true, atom.Math: true,
	atom.Canvas: true, atom.Video: true, atom.Audio: true, atom.Track: true,
	atom.Iframe: true, atom.Frame: true, atom.Frameset: true, atom.Object: true, atom.Embed: true,
	atom.Form: true, atom.Input: true, atom.Button: true, atom.Select: true, atom.Textarea: true,
	atom.Link: true, atom.Meta: true, atom.Base: true,
}

// toMarkdown reads body as HTML (golang.org/x/net/html, the parser Go
// keeps), leaves out what [dropped] names, and makes it markdown with
// html-to-markdown, MaxConverts pages at a time. A page nested deeper
// than MaxDepth elements is given as plain text instead ([plainText]):
// the converter walks the tree by recursion, and its stack must not grow
// with what a page chooses. The parse and the walks here are iterative.
func (w *Web) toMarkdown(ctx context.Context, body []byte, base *url.URL, p *Page) error {
	select {
	case w.convert <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	type result struct {
		title, text string
		plain       bool
		err         error
	}
	done := make(chan result, 1)
	// Neither the parser nor the converter can be stopped midway: the
	// conversion runs apart, and the call returns when its time is up.
	// The slot is given back only when the work ends, so no more than
	// MaxConverts run at once whatever their callers do.
	go func() {
		defer func() { <-w.convert }()
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("the page could not be made markdown: %v", r)}
			}
		}()
		var r result
		doc, title, text, plain := parsePage(body)
		if plain {
			done <- result{title: title, text: text, plain: true}
			return
		}
		r.title = title
		r.text, r.err = w.markdownHalves(doc, base)
		done <- r
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return r.err
		}
		p.Title, p.Text, p.Plain, p.Markdown = r.title, r.text, r.plain, !r.plain
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// markdownHalves makes doc markdown, in two halves at once where the page
// is large enough to cut ([splitBody]) and the gate's other slot is free
// at that moment: the second half takes that slot, and gives it back when
// its work ends, so the pages and halves converting never number more
// than MaxConverts. The caller holds the first slot. Otherwise, or where
// the page offers no cut, doc is made markdown whole.
func (w *Web) markdownHalves(doc *html.Node, base *url.URL) (string, error) {
	at := splitBody(doc)
	if at == nil {
		return wholeMarkdown(doc, base)
	}
	select {
	case w.convert <- struct{}{}:
	default:
		return wholeMarkdown(doc, base)
	}
	second := cut(at)
	type half struct {
		md  []byte
		err error
	}
	other := make(chan half, 1)
	go func() {
		defer func() { <-w.convert }()
		defer func() {
			if r := recover(); r != nil {
				other <- half{err: fmt.Errorf("the page could not be made markdown: %v", r)}
			}
		}()
		md, err := markdown(second, base)
		other <- half{md, err}
	}()
	first, err := markdown(doc, base)
	h := <-other // waited for even after an error: the half's work is this page's
	if err != nil {
		return "", err
	}
	if h.err != nil {
		return "", h.err
	}
	return validText(joinHalves(first, h.md)), nil
}

// convertHTML is toMarkdown's work on one core, without the limit on
// conversions at once (fuzzed and benchmarked alone).
func convertHTML(body []byte, base *url.URL) (title, text string, plain bool, err error) {
	doc, title, text, plain := parsePage(body)
	if plain {
		return title, text, true, nil
	}
	text, err = wholeMarkdown(doc, base)
	if err != nil {
		return "", "", false, err
	}
	return title, text, false, nil
}

// parsePage reads body as HTML (golang.org/x/net/html) and prunes it
// ([prune]), and finds its title. A page the parser refuses or nested
// past MaxDepth comes as plain text instead (plain true, doc nil, text
// its words).
func parsePage(body []byte) (doc *html.Node, title, text string, plain bool) {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		// The parser refuses a page whose open elements pass 512 (its
		// own limit, the spec's too): such a page comes as plain text.
		title, text = plainText(body)
		return nil, title, text, true
	}
	if prune(doc) > MaxDepth {
		title, text = plainText(body)
		return nil, title, text, true
	}
	return doc, findTitle(doc), "", false
}

// wholeMarkdown is doc made markdown in one piece, as valid UTF-8.
func wholeMarkdown(doc *html.Node, base *url.URL) (string, error) {
	md, err := markdown(doc, base)
	if err != nil {
		return "", err
	}
	return validText(md), nil
}

// markdown is html-to-markdown's conversion of doc, its relative links
// read against base where there is one.
func markdown(doc *html.Node, base *url.URL) ([]byte, error) {
	var opts []converter.ConvertOptionFunc
	if base != nil {
		opts = append(opts, converter.WithDomain(base.String()))
	}
	return htmltomarkdown.ConvertNode(doc, opts...)
}

// prune removes the dropped elements and comments and returns how deep
// the elements left are nested, walking without recursion.
func prune(doc *html.Node) int {
	type item struct {
		n     *html.Node
		depth int
	}
	deepest := 0
	stack := []item{{doc, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth > deepest {
			deepest = it.depth
		}
		for c := it.n.FirstChild; c != nil; {
			next := c.NextSibling
			switch {
			case c.Type == html.CommentNode || c.Type == html.ElementNode && (dropped[c.DataAtom] || c.DataAtom == 0 && c.Namespace != ""):
				it.n.RemoveChild(c)
			case c.Type == html.ElementNode:
				keepLinks(c)
				stack = append(stack, item{c, it.depth + 1})
			}
			c = next
		}
	}
	return deepest
}

// keepLinks drops a link whose target is no web page: javascript:,
// data:, file: and the like, which a client that shows the markdown
// could run or open. Its text stays.
func keepLinks(n *html.Node) {
	if n.DataAtom != atom.A && n.DataAtom != atom.Area {
		return
	}
	kept := n.Attr[:0]
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, "href") && !webLink(a.Val) {
			continue
		}
		kept = append(kept, a)
	}
	n.Attr = kept
}

// webLink reports whether href is relative, or http:, https: or mailto:.
func webLink(href string) bool {
	u, err := url.Parse(strings.TrimSpace(href))
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "", "http", "https", "mailto":
		return u.Scheme != "" || u.Opaque == ""
	}
	return false
}

// findTitle is the text of the document's first <title>.
func findTitle(doc *html.Node) string {
	stack := []*html.Node{doc}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Type == html.ElementNode && n.DataAtom == atom.Title {
			var b strings.Builder
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.TextNode {
					b.WriteString(c.Data)
				}
			}
			return strings.Join(strings.Fields(strings.ToValidUTF8(b.String(), "\uFFFD")), " ")
		}
		for c := n.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return ""
}

// plainText is the page's text in order, a line break after each block,
// read token by token (html.Tokenizer: no tree, no stack), the contents
// of what [dropped] names left out; and its first <title>.
func plainText(body []byte) (title, text string) {
	z := html.NewTokenizer(bytes.NewReader(body))
	var b strings.Builder
	skip := atom.Atom(0) // inside a dropped raw-text element: its end tag ends the skip
	inTitle := false
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return oneLine(title), validText([]byte(strings.TrimSpace(b.String()))) + "\n"
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			switch {
			case skip != 0:
				if tt == html.EndTagToken && a == skip {
					skip = 0
				}
			case tt == html.StartTagToken && (a == atom.Script || a == atom.Style || a == atom.Noscript || a == atom.Template || a == atom.Textarea || a == atom.Svg || a == atom.Math):
				skip = a
			case a == atom.Title:
				inTitle = tt == html.StartTagToken
			case isBlock(a) && b.Len() > 0 && !strings.HasSuffix(b.String(), "\n"):
				b.WriteByte('\n')
			}
		case html.TextToken:
			if skip != 0 {
				continue
			}
			t := strings.Join(strings.Fields(string(z.Text())), " ")
			if inTitle {
				if title == "" {
					title = t
				}
				continue
			}
			if t == "" {
				continue
			}
			if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
				b.WriteByte(' ')
			}
			b.WriteString(t)
		}
	}
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Br, atom.Li, atom.Tr, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
		atom.Pre, atom.Blockquote, atom.Section, atom.Article, atom.Header, atom.Footer, atom.Table, atom.Ul, atom.Ol:
		return true
	}
	return false
}
