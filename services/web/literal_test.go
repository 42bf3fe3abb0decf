package web

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/mdliteral/mdtest"
)

// hostileWords are a page's words written as Markdown: a link to
// javascript:, a tracking image, raw HTML, a fence that tries to end the
// code block they are put in.
const hostileWords = "[x](javascript:alert(1)) ![](http://tracker.example/track.png) <img src=http://tracker.example/t2.png>\n````\n![a](http://tracker.example/t3.png) <https://tracker.example/auto>\n"

// ourFence is the answer's own fence lines, which a renderer reads as
// an unknown HTML element: Link's words, not the page's.
var ourFence = regexp.MustCompile(`^<(end of )?web (page|search results) [0-9a-f]{16}>$`)

// onlyLink wants the rendering of answer to make live exactly the links
// in want (in order), no image and no HTML but the answer's own fence.
func onlyLink(t *testing.T, what, answer string, want ...string) {
	t.Helper()
	l := mdtest.Render(answer)
	html := l.HTML[:0]
	for _, h := range l.HTML {
		if !ourFence.MatchString(h) {
			html = append(html, h)
		}
	}
	l.HTML = html
	if strings.Join(l.Links, " ") != strings.Join(want, " ") || len(l.Images) != 0 || len(l.HTML) != 0 {
		t.Errorf("%s, rendered as markdown, made live %+v (want links %q alone):\n%s", what, l, want, answer)
	}
}

// TestPageWordsRenderAsWords: every way a page's words reach the model —
// a page nested past MaxDepth (plain text), text/plain, JSON, a page
// with no type, the title, the final URL a redirect chose, a refusal
// quoting the site's URL, a search's results — renders as markdown with
// no link, image or HTML of the page's making. The page's real web link
// stays a link (the control), and each hostile text alone renders live
// (the check can fail).
func TestPageWordsRenderAsWords(t *testing.T) {
	if l := mdtest.Render(hostileWords); len(l.Links) == 0 || len(l.Images) == 0 || len(l.HTML) == 0 {
		t.Fatalf("the hostile words alone make %+v: the check could not fail", l)
	}
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("pub.example.com", publicHost)
	serve := func(path, typ, body string) {
		w.mux.HandleFunc(path, func(rw http.ResponseWriter, r *http.Request) {
			if typ == "" {
				rw.Header()["Content-Type"] = nil
			} else {
				rw.Header().Set("Content-Type", typ)
			}
			io.WriteString(rw, body)
		})
	}
	escapedWords := strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(hostileWords)
	serve("/deep", "text/html", "<html><head><title>"+escapedWords+"</title></head><body>"+strings.Repeat("<div>", 600)+escapedWords+strings.Repeat("</div>", 600)+"</body></html>")
	serve("/plain", "text/plain; charset=utf-8", hostileWords)
	serve("/json", "application/json", `{"a":"`+strings.ReplaceAll(hostileWords, "\n", " ")+`"}`)
	serve("/untyped", "", hostileWords)
	serve("/html", "text/html", `<html><head><title>`+escapedWords+`</title></head><body><p>`+escapedWords+`</p><p><a href="javascript:alert(1)">js</a> <a href="https://example.org/real">real</a></p></body></html>`)
	tool, _ := w.tool(Config{})
	for _, path := range []string{"/deep", "/plain", "/json", "/untyped"} {
		p := fetched(t, tool, "http://pub.example.com"+path)
		if !strings.Contains(p.Text, "[x](javascript:alert(1))") {
			t.Errorf("%s: the page's words are not all there:\n%s", path, p.Text)
		}
		onlyLink(t, path, pageText(p))
	}
	// The control: HTML made markdown keeps its real web link a link;
	// its javascript: link, its words and its title make none but the
	// autolinks GitHub's markdown makes of bare http:// URLs in its words
	// (web links, as the page's own links may be), and its javascript:
	// link is left a link to the page itself.
	p := fetched(t, tool, "http://pub.example.com/html")
	if !p.Markdown || !strings.Contains(p.Title, "[x](javascript:alert(1))") {
		t.Fatalf("the HTML page: markdown %v, title %q", p.Markdown, p.Title)
	}
	onlyLink(t, "an HTML page", pageText(p), "http://tracker.example/track.png", "http://tracker.example/t3.png", "http://pub.example.com/html", "https://example.org/real")
	// The final URL, which a redirect chose.
	bad := "/plain/![x](t.png)"
	w.mux.HandleFunc("/plain/", func(rw http.ResponseWriter, r *http.Request) { io.WriteString(rw, "words") })
	p = fetched(t, tool, "http://pub.example.com/to?u="+url.QueryEscape(bad))
	if !strings.HasSuffix(p.URL, bad) {
		t.Fatalf("the final URL %q", p.URL)
	}
	onlyLink(t, "a redirect's URL", pageText(p))
	// A refusal quoting the URL the site chose.
	w.mux.HandleFunc("/https-to", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "http://pub.example.com"+bad, http.StatusFound)
	})
	_, err := tool.Fetch(t.Context(), "https://pub.example.com/https-to")
	r, ok := asRefusal(err)
	if !ok || !strings.Contains(r.Reason, bad) {
		t.Fatalf("https to http: %v", err)
	}
	onlyLink(t, "a refusal", refusalText(r))
	// A search's results: titles, URLs and snippets are the web's.
	rs := []Result{
		{Title: hostileWords, URL: "javascript:alert(1)", Snippet: hostileWords},
		{Title: "`` ` [y](javascript:1)", URL: "https://example.com/![i](http://tracker.example/s.png)", Snippet: "<b>bold</b> www.tracker.example"},
	}
	onlyLink(t, "search results", resultsText("[q](javascript:1)", rs))
}
