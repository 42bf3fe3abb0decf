package web

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// maxCutsTried bounds the cuts FuzzSplitConvert converts for one input.
const maxCutsTried = 8

// FuzzSplitConvert: at every place splitBody may cut a page (splitPoints,
// the size threshold aside), the two halves' markdown joined is byte for
// byte the markdown of the whole page, deep and broken pages among the
// seeds (testdata/fuzz/FuzzSplitConvert).
func FuzzSplitConvert(f *testing.F) {
	f.Add([]byte(benchPage()[:4000]))
	base, _ := url.Parse("https://example.com/a/")
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<14 {
			return
		}
		doc, _, _, plain := parsePage(b)
		if plain {
			return
		}
		cuts, _, _ := splitPoints(doc)
		whole, err := markdown(doc, base)
		if err != nil {
			return
		}
		for i := range min(len(cuts), maxCutsTried) {
			first, second := cutAtIndex(t, b, i)
			m1, err1 := markdown(first, base)
			m2, err2 := markdown(second, base)
			if err1 != nil || err2 != nil {
				t.Fatalf("cut %d: a half failed where the whole did not: %v, %v", i, err1, err2)
			}
			if got := joinHalves(m1, m2); !bytes.Equal(got, whole) {
				t.Fatalf("cut %d of %d changed the markdown:\nwhole:  %q\njoined: %q", i, len(cuts), whole, got)
			}
		}
	})
}

// cutAtIndex parses b afresh and cuts it at its i-th cut.
func cutAtIndex(t *testing.T, b []byte, i int) (first, second *html.Node) {
	doc, _, _, plain := parsePage(b)
	if plain {
		t.Fatal("parsed as plain text the second time")
	}
	cuts, _, _ := splitPoints(doc)
	if i >= len(cuts) {
		t.Fatalf("cut %d of %d the second time", i, len(cuts))
	}
	return doc, cut(cuts[i])
}

// TestSplitWherePassesCross: a place where one of the converter's
// passes reaches across (a list-end mark between two lists, a paragraph
// led by bold its neighbour spaces, whitespace) is no cut; a heading or
// paragraph led by words after a paragraph, heading or list is.
func TestSplitWherePassesCross(t *testing.T) {
	for _, c := range []struct {
		page string
		cuts int
	}{
		{"<p>a</p><h2>b</h2><p>c</p><ul><li>d</li></ul><p>e</p>", 3},
		{"<main><div><p>a</p> <p>b</p></div></main>", 1},
		{"<ul><li>a</li></ul><ul><li>b</li></ul>", 0},
		{"<p>a</p><p><b>b</b></p><p></p><p> </p>", 0},
		{"<p>a</p>text<p>b</p><blockquote>q</blockquote><p>c</p>", 0},
		{"<div><p>a</p></div><div><p>b</p></div>", 0},
	} {
		doc, _, _, _ := parsePage([]byte(c.page))
		if cuts, _, _ := splitPoints(doc); len(cuts) != c.cuts {
			t.Errorf("%q: %d cuts, want %d", c.page, len(cuts), c.cuts)
		}
	}
}

// TestSplitBenchPage: the benchmark's page is cut near its middle, and
// the halves joined are its whole markdown; a page below minSplit is not
// cut.
func TestSplitBenchPage(t *testing.T) {
	page := []byte(benchPage())
	_, want, _, err := convertHTML(page, nil)
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _, _ := parsePage(page)
	at := splitBody(doc)
	if at == nil {
		t.Fatal("the benchmark's page was not cut")
	}
	second := cut(at)
	if n1, n2 := textBytes(doc), textBytes(second); n1 < n2/2 || n2 < n1/2 {
		t.Errorf("halves of %d and %d text bytes: not near the middle", n1, n2)
	}
	m1, err := markdown(doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := markdown(second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(joinHalves(m1, m2)); got != want {
		t.Fatalf("the halves joined are not the whole's markdown (%d and %d bytes)", len(got), len(want))
	}
	small, _, _, _ := parsePage([]byte("<p>a</p><h2>b</h2><p>c</p>"))
	if splitBody(small) != nil {
		t.Error("a page below minSplit was cut")
	}
}

// TestHalfTakesTheSecondSlot: a page the tool cuts takes the gate's
// second slot for its second half, so the gate is seen full with one
// page converting (the halves run at once), and the page's markdown is
// its whole markdown; with the second slot held elsewhere, the page is
// made markdown whole on its one slot, never waiting for a third, and
// the same markdown comes back.
func TestHalfTakesTheSecondSlot(t *testing.T) {
	page := []byte(strings.Replace(benchPage(), "<main>", "<main>"+strings.Repeat("<p>"+strings.Repeat("words ", 20000)+"</p><h2>a heading</h2>", 4), 1))
	_, want, _, err := convertHTML(page, nil)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	seenFull := false
	for try := 0; try < 20 && !seenFull; try++ {
		slotsFree(t, tool) // a slot still held by the last page is not this page's
		done := make(chan error, 1)
		var p Page
		go func() { done <- tool.toMarkdown(ctx, page, nil, &p) }()
	watch:
		for {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
				break watch
			default:
				if len(tool.convert) == MaxConverts {
					seenFull = true
				}
				runtime.Gosched()
			}
		}
		if p.Text != want {
			t.Fatalf("a page cut in two came back as other markdown (%d bytes, want %d)", len(p.Text), len(want))
		}
	}
	if !seenFull {
		t.Fatal("one page never took the gate's second slot")
	}

	slotsFree(t, tool)
	tool.convert <- struct{}{} // the second slot held elsewhere
	var p Page
	if err := tool.toMarkdown(ctx, page, nil, &p); err != nil {
		t.Fatal(err)
	}
	<-tool.convert
	if p.Text != want {
		t.Fatalf("a page made markdown on one slot came back as other markdown")
	}
	slotsFree(t, tool)
}

// slotsFree waits until no conversion holds a slot of tool's gate (each
// gives its slot back just after its answer), failing after a minute.
func slotsFree(t testing.TB, tool *Web) {
	t.Helper()
	for end := time.Now().Add(time.Minute); len(tool.convert) != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d slots still held after the pages ended", len(tool.convert))
		}
	}
}

// splitFragments are blocks and bits of blocks the converter treats
// each in its own way, for TestSplitGeneratedPages to string together.
var splitFragments = []string{
	"<p>words</p>", "<p>1. z</p>", "<p>===</p>", "<p>---</p>", "<p>- y</p>", "<p>+ w</p>", "<p># h</p>",
	"<p>&gt; q</p>", "<p>*a*</p>", "<p>`c`</p>", "<p>[d](e)</p>", "<p> lead</p>", "<p>trail </p>",
	"<p><b>bold</b> x</p>", "<p>x <i>it</i></p>", "<p><code>c</code></p>", "<p>a<br></p>", "<p></p>",
	"<h1>h</h1>", "<h2>=</h2>", "<h3>-</h3>", "<h2><a href=\"/h\">l</a></h2>", "<h4>x</h4>",
	"<ul><li>a</li></ul>", "<ol><li>b</li></ol>", "<ol start=\"7\"><li>c</li></ol>", "<ul><li><p>d</p></li></ul>",
	"<pre>p\n\nq</pre>", "<pre><code class=\"language-go\">x</code></pre>", "<blockquote>q</blockquote>",
	"<hr>", "<br>", "text", " ", "\n", "<b>b</b>", "<a href=\"/a\">a</a>", "<code>k</code>",
	"<div><p>in</p></div>", "<table><tr><td>t</td></tr></table>", "<span>s</span>", "<p>x\xffy</p>",
}

// TestSplitGeneratedPages: pages strung from splitFragments (a fixed
// seed, so every run tries the same), each cut at every place
// splitPoints offers: the halves joined are always the whole's markdown.
func TestSplitGeneratedPages(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 2))
	tried := 0
	for n := 0; n < 1500; n++ {
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteString("<main>")
		}
		for range 2 + r.IntN(10) {
			b.WriteString(splitFragments[r.IntN(len(splitFragments))])
		}
		page := []byte(b.String())
		doc, _, _, _ := parsePage(page)
		whole, err := markdown(doc, nil)
		if err != nil {
			t.Fatal(err)
		}
		cuts, _, _ := splitPoints(doc)
		for i := range cuts {
			first, second := cutAtIndex(t, page, i)
			m1, err1 := markdown(first, nil)
			m2, err2 := markdown(second, nil)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if got := joinHalves(m1, m2); !bytes.Equal(got, whole) {
				t.Fatalf("%q cut %d:\nwhole:  %q\njoined: %q", page, i, whole, got)
			}
			tried++
		}
	}
	if tried < 1000 {
		t.Fatalf("only %d cuts tried", tried)
	}
}
