package mdliteral

import (
	"strings"
	"testing"

	"lnk.dev/lnk/internal/mdliteral/mdtest"
)

// hostile are texts a page could hold to make a link, an image or HTML
// of its words, or to end the code they are put in early.
var hostile = []string{
	"[x](javascript:alert(1))",
	"![](http://tracker.example/t.png)",
	"<img src=http://tracker.example/t.png>",
	"<https://example.com/> www.example.com http://example.com/",
	"<script>alert(1)</script>",
	"```\n[x](javascript:alert(1))\n```",
	"````\n![](http://t.example/p.png)",
	"`` ` ``` [x](javascript:1) `",
	"[x]: javascript:alert(1)\n\n[x]",
	"a\r```\r![](http://t.example/p.png)",
	"`",
	"ends with a backtick `",
	"~~~\n<b>x</b>\n~~~",
}

// TestBlockAndSpanAreText: each hostile text, as a block or a span,
// renders with nothing live and reads back whole; the same text as
// Markdown (the control) makes what it tries to.
func TestBlockAndSpanAreText(t *testing.T) {
	for _, s := range hostile {
		if l := mdtest.Render("Before.\n" + Block(s) + "After [a](https://example.org/)."); len(l.Links) != 1 || len(l.Images)+len(l.HTML) != 0 {
			t.Errorf("Block(%q) made live: %+v", s, l)
		}
		if l := mdtest.Render("Title: " + Span(s) + " and [a](https://example.org/)."); len(l.Links) != 1 || len(l.Images)+len(l.HTML) != 0 {
			t.Errorf("Span(%q) made live: %+v", s, l)
		}
		if !strings.Contains(Block(s), strings.TrimRight(s, "\r\n")) {
			t.Errorf("Block(%q) lost words: %q", s, Block(s))
		}
	}
	for _, s := range hostile[:5] {
		if mdtest.Render(s).Empty() {
			t.Errorf("the control %q made nothing live: the check cannot fail", s)
		}
	}
	if Span("") != "" || Span(" a \n b ") != "` a b `" || Span("a`b") != "`` a`b ``" {
		t.Errorf("Span: %q %q %q", Span(""), Span(" a \n b "), Span("a`b"))
	}
	if Block("x\n") != "```\nx\n```\n" || Block("a ```` b") != "`````\na ```` b\n`````\n" {
		t.Errorf("Block: %q %q", Block("x\n"), Block("a ```` b"))
	}
}
