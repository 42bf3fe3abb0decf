package extract

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/ledongthuc/pdf"
)

// Pdf is the text of the PDF document doc, page by page, each page's
// text ending in a newline. The parser is github.com/ledongthuc/pdf: pure
// Go (no cgo, so the static lnk-memory stays static), no dependencies of
// its own, and text extraction is all it does, from the parser the Go
// authors wrote (rsc.io/pdf) kept up with fonts and encodings. It trusts
// its input far enough to panic, loop or allocate on a crafted file, so
// it runs only in the extractor's child (Child) under its limits; a panic
// here is that document's error.
func Pdf(doc []byte) (text string, err error) {
	if len(doc) > MaxDocument {
		return "", fmt.Errorf("%d bytes, more than the %d a document may have", len(doc), MaxDocument)
	}
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("not a PDF document it can read: %v", r)
		}
	}()
	all, err := pdfPages(doc)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, p := range all {
		t, err := p.GetPlainText(nil)
		if err != nil {
			return "", fmt.Errorf("page %d: %w", i+1, err)
		}
		b.WriteString(t)
		b.WriteByte('\n')
		if b.Len() > MaxText {
			return "", ErrTooMuchText
		}
	}
	return b.String(), nil
}

// pdfPages is doc's pages, its opening's reads bounded (openBytes) and
// its page tree checked whole before a page is read (pages,
// pagetree.go): the parser's own walks of the /Prev chain and of the
// tree (r.Page) trust them not to loop. A panic of the parser's is an
// error.
func pdfPages(doc []byte) (all []pdf.Page, err error) {
	defer func() {
		if r := recover(); r != nil {
			all, err = nil, fmt.Errorf("not a PDF document it can read: %v", r)
		}
	}()
	f := &opening{r: bytes.NewReader(doc), left: openBytes(len(doc))}
	r, err := pdf.NewReader(f, int64(len(doc)))
	f.left = -1 // opened: the pages' reads are the child's limits' to bound
	if err != nil {
		return nil, fmt.Errorf("not a PDF document: %w", err)
	}
	if all, err = pages(r, len(doc)); err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, errors.New("not a PDF document: no pages")
	}
	return all, nil
}

// openBytes is the most bytes of a document of size bytes the parser may
// read while it opens it (its cross-reference sections, each named by
// the one after it through /Prev, the last by startxref): each section
// once, with up to 4 KiB read ahead of each, is less than twice the
// document and a MiB unless it holds hundreds of sections (a writer
// appends one at each save). The parser follows /Prev with no memory of where
// it has been, so a section naming itself (or one after it) would loop
// it until the child's 30 s of CPU; past this it is refused at once.
func openBytes(size int) int64 { return 2*int64(size) + 1<<20 }

// opening is the document as the parser opens it: its reads counted
// against left until left is -1 (opened).
type opening struct {
	r    *bytes.Reader
	left int64
}

func (o *opening) ReadAt(p []byte, off int64) (int, error) {
	if o.left >= 0 {
		if int64(len(p)) > o.left {
			return 0, errors.New("its cross-reference sections take more reading than twice the document (a /Prev chain that loops)")
		}
		o.left -= int64(len(p))
	}
	return o.r.ReadAt(p, off)
}
