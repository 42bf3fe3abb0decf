package extract_test

import (
	"archive/zip"
	"bytes"
	"strings"
	"testing"

	"lnk.dev/lnk/services/memory/extract"
)

// Docx makes a Word document whose document.xml is body.
func Docx(t testing.TB, body string) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	w, err := z.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(`<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` + body + `</w:body></w:document>`))
	z.Close()
	return b.Bytes()
}

func TestDocx(t *testing.T) {
	text, err := extract.Docx(Docx(t, `<w:p><w:r><w:t>Tea at </w:t><w:t>noon</w:t></w:r></w:p><w:p><w:r><w:t>Trains</w:t></w:r></w:p>`))
	if err != nil || text != "Tea at noon\nTrains\n" {
		t.Fatalf("%q %v", text, err)
	}
	for name, doc := range map[string][]byte{
		"not a zip": []byte("plain text"),
		"bad xml":   Docx(t, `<w:p><w:t>open`),
		"too much":  Docx(t, strings.Repeat(`<w:p><w:t>`+strings.Repeat("x", 1000)+`</w:t></w:p>`, 2200)),
		"too large": make([]byte, extract.MaxDocument+1),
	} {
		if _, err := extract.Docx(doc); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
