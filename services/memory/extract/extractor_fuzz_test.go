package extract

import (
	"encoding/binary"
	"os"
	"testing"
)

// FuzzExtractorAnswer: whatever the extractor's side of the pipe says,
// Extract answers a text of at most MaxText or an error, never panics,
// and after an answer it cannot have made every later document fails.
func FuzzExtractorAnswer(f *testing.F) {
	ok := func(status byte, body string) []byte {
		b := []byte{status, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(b[1:], uint32(len(body)))
		return append(b, body...)
	}
	f.Add(ok('o', "kumquat\n"))
	f.Add(ok('e', "not a PDF document"))
	f.Add([]byte{'o', 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{'x', 0, 0, 0, 1, 'a'})
	f.Add([]byte{'o', 0, 0})
	f.Fuzz(func(t *testing.T, answer []byte) {
		reqR, reqW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		ansR, ansW, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer reqR.Close()
		go func() {
			buf := make([]byte, 64)
			reqR.Read(buf) // the request, which the fake extractor ignores
			ansW.Write(answer)
			ansW.Close()
		}()
		e := &Extractor{req: reqW, ans: ansR}
		defer e.Close()
		text, err := e.Extract("pdf", []byte("%PDF"))
		if err == nil && len(text) > MaxText {
			t.Fatalf("%d bytes of text taken", len(text))
		}
		if e.dead != nil {
			if _, err := e.Extract("pdf", []byte("%PDF")); err == nil {
				t.Fatal("a dead extractor answered")
			}
		}
	})
}
