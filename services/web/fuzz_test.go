package web

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"lnk.dev/lnk/internal/mdliteral/mdtest"
)

// FuzzConvertHTML: whatever a page holds — nested past any depth, broken,
// not UTF-8 — conversion ends without a panic, its text and title are
// UTF-8, a page it gives as markdown was no deeper than MaxDepth once
// pruned, and nothing inside a <script> reaches the text.
func FuzzConvertHTML(f *testing.F) {
	for _, s := range []string{
		"<p>hello</p>",
		strings.Repeat("<div>", 600) + "deep",
		strings.Repeat("<b><i>", 400) + "x",
		strings.Repeat("<ul><li>", 300) + "item",
		strings.Repeat("<table><tr><td>", 200),
		"<svg><foreignObject><math><mi><script>SCRIPTMARK</script>",
		"<!-- unclosed <p>a",
		"<p>\xff\xfe\x00bad</p>",
		"<a href=\"javascript:alert(1)\">x</a><script>SCRIPTMARK</script>",
	} {
		f.Add([]byte(s))
	}
	base, _ := url.Parse("https://example.com/a/")
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		title, text, plain, err := convertHTML(b, base)
		if err != nil {
			return
		}
		if !utf8.ValidString(text) || !utf8.ValidString(title) {
			t.Fatalf("not UTF-8: %q / %q", title, text)
		}
		if !strings.Contains(string(b), "SCRIPTMARK") || strings.Count(string(b), "SCRIPTMARK") != strings.Count(string(b), "<script>SCRIPTMARK</script>") {
			return
		}
		if strings.Contains(text, "SCRIPTMARK") {
			t.Fatalf("a script's text reached the page (plain %v): %q", plain, text)
		}
	})
}

// FuzzParseTarget: a URL that is taken is http or https, has no login,
// a port, and a host that reads again as itself.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"http://example.com/", "https://[::ffff:127.0.0.1]:8443/x", "http://0x7f.1/", "http://user@h/", "ftp://x/", "http://h:0/", "http://%41/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse(s)
		if err != nil {
			return
		}
		tg, err := parseTarget(u)
		if err != nil {
			return
		}
		if tg.u.Scheme != "http" && tg.u.Scheme != "https" || tg.u.User != nil || tg.port == 0 || tg.host.String() == "" {
			t.Fatalf("%q taken as %+v", s, tg)
		}
	})
}

// FuzzPageText: whatever a text page, its title, its final URL or a
// search result holds, the answer rendered as markdown makes nothing live
// but its own fence lines.
func FuzzPageText(f *testing.F) {
	f.Add(hostileWords, "[t](javascript:1)", "https://example.com/![i](t.png)")
	f.Add("````\n<b>x</b>", "`` ` ``", "<https://x.example/>")
	f.Fuzz(func(t *testing.T, text, title, u string) {
		answers := []string{
			pageText(&Page{URL: u, Status: 200, Title: title, Text: text}),
			pageText(&Page{URL: u, Status: 200, Title: title, Text: text, Plain: true}),
			resultsText(title, []Result{{Title: title, URL: u, Snippet: text}}),
		}
		for _, a := range answers {
			l := mdtest.Render(a)
			for _, h := range l.HTML {
				if !ourFence.MatchString(h) {
					t.Fatalf("HTML %q made live:\n%s", h, a)
				}
			}
			if len(l.Links) != 0 || len(l.Images) != 0 {
				t.Fatalf("made live %+v:\n%s", l, a)
			}
		}
	})
}
