package extract

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// The two document parsers at the trust boundary (a document the agent,
// or whoever wrote into its Home, put in memory/): whatever the bytes,
// each returns text or an error, never a panic, and never more text than
// MaxText. A loop or an allocation past the child's limits is the
// child's to bound (TestExtractChildLimits in cmd/lnk-memory); the seeds
// in testdata are a real writer's document, one cut short and one that
// is not one.

func FuzzPdf(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte) {
		text, err := Pdf(doc)
		if err != nil && text != "" {
			t.Fatalf("text beside an error: %q %v", text, err)
		}
		if len(text) > MaxText+64<<10 {
			t.Fatalf("%d bytes of text", len(text))
		}
	})
}

func FuzzDocx(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte) {
		text, err := Docx(doc)
		if err != nil {
			return
		}
		if len(text) > MaxText+64<<10 {
			t.Fatalf("%d bytes of text", len(text))
		}
	})
}

// The seeds are what they say: the real documents read, the others refused.
func TestParserSeeds(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func([]byte) (string, error)
		doc  string
		want string
	}{
		{"pdf", Pdf, "testdata/fuzz/FuzzPdf/real", "kumquat tree"},
		{"docx", Docx, "testdata/fuzz/FuzzDocx/real", "persimmon kumquat"},
	} {
		doc := seedBytes(t, c.doc)
		if got, err := c.f(doc); err != nil || !strings.Contains(got, c.want) {
			t.Errorf("%s %s: %q %v", c.name, c.doc, got, err)
		}
		if _, err := c.f(doc[:len(doc)/3]); err == nil {
			t.Errorf("%s %s cut short: read", c.name, c.doc)
		}
	}
}

// seedBytes is the []byte of a fuzz corpus file.
func seedBytes(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(raw), "\n", 3)
	body, ok := strings.CutPrefix(strings.TrimSpace(lines[1]), "[]byte(")
	if !ok || !strings.HasSuffix(body, ")") {
		t.Fatalf("%s: not a []byte seed", path)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(body, ")"))
	if err != nil {
		t.Fatal(err)
	}
	return []byte(s)
}
