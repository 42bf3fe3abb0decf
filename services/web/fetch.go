package web

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"lnk.dev/lnk/internal/mdliteral"
)

// Page is what a fetch answers.
type Page struct {
	URL    string // the final URL, after redirects
	Status int
	Title  string
	Text   string // markdown (Markdown), or the page's text as it came
	Plain  bool   // HTML nested past MaxDepth, given as plain text
	// Markdown is set only where Text is html-to-markdown's, whose
	// escaping keeps the page's words words; any other Text is given
	// to the model as a code block ([pageText]), where nothing renders.
	Markdown bool
}

// Fetch reads rawURL, following at most MaxRedirects redirects, each
// hop checked as the first, within the call's time, and gives the page
// as markdown (HTML) or as it is (other text). What it refuses is a
// *Refusal. Each refusal and failure is logged once, with its reason.
func (w *Web) Fetch(ctx context.Context, rawURL string) (*Page, error) {
	p, err := w.fetch(ctx, rawURL)
	if err != nil {
		w.logf("fetch %q refused: %v", redacted(rawURL), err)
	}
	return p, err
}

// redacted is rawURL for the log: a login's password never in it.
func redacted(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(not a URL)"
	}
	return u.Redacted()
}

func (w *Web) fetch(ctx context.Context, rawURL string) (*Page, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, refusef("not a URL: %v", firstLine(err))
	}
	if _, err := parseTarget(u); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, w.cfg.timeout(),
		refusef("the page, its redirects and body together took longer than %s: cut", w.cfg.timeout()))
	defer cancel()
	client := &http.Client{Transport: w.guard, CheckRedirect: checkRedirect}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, refusef("not a URL: %v", firstLine(err))
	}
	req.Header.Set("User-Agent", "lnk-web/1")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		return nil, w.callError(ctx, err)
	}
	defer resp.Body.Close()
	body, err := readBody(resp)
	if err != nil {
		return nil, w.callError(ctx, err)
	}
	if len(body) > MaxPage {
		return nil, refusef("the page is larger than %d MB: cut at %d bytes, nothing of it given", MaxPage>>20, MaxPage)
	}
	p := &Page{URL: resp.Request.URL.String(), Status: resp.StatusCode}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml" || mt == "" && looksHTML(body):
		if err := w.toMarkdown(ctx, body, resp.Request.URL, p); err != nil {
			return nil, w.callError(ctx, err)
		}
	case strings.HasPrefix(mt, "text/") || mt == "application/json" || mt == "application/xml" || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") || mt == "" && !bytes.ContainsRune(body, 0):
		p.Text = validText(body)
	case mt == "":
		return nil, refusef("the page says no type and holds NUL bytes: not text, and only HTML and text are read")
	default:
		return nil, refusef("the page is %s, not text: only HTML and text are read", mt)
	}
	return p, nil
}

// readBody reads resp's body up to MaxPage+1 bytes, into a buffer of the
// size the server said (at most MaxPage) where it said one, with room for
// ReadFrom's last read: read once, not copied over as a buffer grows.
// Where it said none (a chunked body), the buffer starts at firstRead,
// which holds most pages whole: grown from bytes.Buffer's 512 bytes, a
// 100 KB page was copied and cleared again at each doubling.
func readBody(resp *http.Response) ([]byte, error) {
	var b bytes.Buffer
	if n := resp.ContentLength; n > 0 {
		b.Grow(int(min(n, MaxPage)) + bytes.MinRead)
	} else if n < 0 {
		b.Grow(firstRead)
	}
	_, err := b.ReadFrom(io.LimitReader(resp.Body, MaxPage+1))
	return b.Bytes(), err
}

// firstRead is the buffer a body of no said length is read into first.
const firstRead = 128 << 10

// validText is b as a string, each invalid byte U+FFFD and each C0
// control but tab, newline and CR removed: the one cleaning of what both
// the text and the HTML path give the model (a NUL or an ESC in a page is
// no text a reader of it saw).
func validText(b []byte) string {
	if utf8.Valid(b) && !hasC0Control(b) {
		return string(b)
	}
	return strings.Map(func(r rune) rune {
		if c0Control(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(string(b), "\uFFFD"))
}

// c0Control reports a C0 control but tab, newline and CR.
func c0Control(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' && r != '\r'
}

// hasC0Control reports whether b holds a byte [c0Control] refuses. A C0
// control is one byte in UTF-8, never part of another character's, so
// b is read as bytes, eight at a time: a word with no byte below 0x20
// (the test is exact for whether such a byte exists, n ≤ 128) is passed
// whole, and only a word holding one (a page's newlines) is looked at
// byte by byte. It is held to bytes.IndexFunc by TestHasC0Control and
// FuzzHasC0Control.
func hasC0Control(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if (w-ones*0x20)&^w&highs == 0 {
			continue
		}
		for _, c := range b[i : i+8] {
			if c0Control(rune(c)) {
				return true
			}
		}
	}
	for _, c := range b[i:] {
		if c0Control(rune(c)) {
			return true
		}
	}
	return false
}

// checkRedirect allows at most MaxRedirects redirects, never from
// https:// to http://; each hop's URL and host are checked again by the
// guard before it is sent. A URL a site chose is quoted in a refusal,
// said to be the site's (the model reads refusals as the tool's), and
// put in a code span: it makes no link where the refusal is rendered.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return refusef("more than %d redirects: not followed past the site's %s", MaxRedirects, mdliteral.Span(via[len(via)-1].URL.Redacted()))
	}
	if prev := via[len(via)-1]; prev.URL.Scheme == "https" && req.URL.Scheme != "https" {
		return refusef("a redirect from https:// to %s:// (the site's %s) is never followed", req.URL.Scheme, mdliteral.Span(req.URL.Redacted()))
	}
	_, err := parseTarget(req.URL)
	return err
}

// callError is the refusal inside err, the call's time running out, or
// err's first line.
func (w *Web) callError(ctx context.Context, err error) error {
	if r, ok := asRefusal(err); ok {
		return r
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return fmt.Errorf("the fetch failed: %s", firstLine(err))
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func looksHTML(b []byte) bool {
	head := strings.ToLower(strings.TrimSpace(string(b[:min(len(b), 512)])))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}
