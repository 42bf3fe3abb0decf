// Package extract takes the text out of Word (.docx) and PDF documents
// for Link Memory, in a child process of its own program (lnk-memory
// extract docx|pdf): the document on its stdin, the text on its stdout,
// no environment, limits set on itself before it reads a byte (30 s of
// CPU, 1 GiB of memory, no core dump, a seccomp filter: no exec, no
// socket) and by its parent (30 s wall, 32 MiB in, 2 MiB out), so a
// document that loops, allocates or crashes its parser fails that
// document alone. Word's parser is the standard library's archive/zip and
// encoding/xml; PDF's is github.com/ledongthuc/pdf (pdf.go says why),
// its page tree checked whole before a page is read, so a tree that
// loops is refused at once rather than at the child's 30 s (pagetree.go).
//
// The memory service itself may not exec (its seccomp filter refuses
// execve and execveat): each child is started by the Extractor, a process
// the service starts before it loads its filter, which holds nothing but
// its own program (landlock: that one file, read and run; seccomp: no
// socket) and a pipe to the service (extractor.go).
//
// # Security
//
// Child: holds nothing but the document; its parent gives it no
// environment and no fd but stdin, stdout and stderr. Extractor: holds
// nothing but its pipes, may run only its own program. Parent: trusts
// nothing the child prints beyond 2 MiB of text.
package extract

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Limits.
const (
	MaxDocument = 32 << 20 // bytes of a document
	MaxText     = 2 << 20  // bytes of its text
	maxXML      = 64 << 20 // bytes of word/document.xml, inflated
)

// ErrTooMuchText is returned when a document's text passes MaxText.
var ErrTooMuchText = errors.New("more text than memory keeps of a document")

// Docx is the text of the Word document doc: each paragraph a line.
func Docx(doc []byte) (string, error) {
	if len(doc) > MaxDocument {
		return "", fmt.Errorf("%d bytes, more than the %d a document may have", len(doc), MaxDocument)
	}
	z, err := zip.NewReader(bytes.NewReader(doc), int64(len(doc)))
	if err != nil {
		return "", fmt.Errorf("not a Word document: %w", err)
	}
	for _, f := range z.File {
		if f.Name != "word/document.xml" {
			continue
		}
		r, err := f.Open()
		if err != nil {
			return "", err
		}
		defer r.Close()
		return paragraphs(io.LimitReader(r, maxXML))
	}
	return "", errors.New("not a Word document: no word/document.xml")
}

// paragraphs is the text of every w:t element, a newline after each w:p.
func paragraphs(r io.Reader) (string, error) {
	d := xml.NewDecoder(r)
	d.Strict = true
	var b strings.Builder
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return b.String(), nil
		}
		if err != nil {
			return "", fmt.Errorf("document.xml: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			inText = t.Name.Local == "t"
			if t.Name.Local == "tab" {
				b.WriteByte('\t')
			}
		case xml.EndElement:
			inText = false
			if t.Name.Local == "p" {
				b.WriteByte('\n')
			}
		case xml.CharData:
			if inText {
				b.Write(t)
			}
		}
		if b.Len() > MaxText {
			return "", ErrTooMuchText
		}
	}
}
