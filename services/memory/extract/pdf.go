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

// pdfPages is doc's pages, its page tree checked whole before a page is
// read (pages, pagetree.go): the parser's own walk of the tree (r.Page)
// trusts it not to loop. A panic of the parser's is an error.
func pdfPages(doc []byte) (all []pdf.Page, err error) {
	defer func() {
		if r := recover(); r != nil {
			all, err = nil, fmt.Errorf("not a PDF document it can read: %v", r)
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(doc), int64(len(doc)))
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
