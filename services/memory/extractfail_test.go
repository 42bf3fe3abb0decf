package memory_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestFailedExtractionNotRunAgainUnchanged: a document whose text could
// not be extracted (a PDF whose parser loops, ended by its child's 30 s)
// is left out again at the next refresh without another child, for the
// same reason, logged once; changed, it is extracted again, and read
// once it extracts. A readable PDF beside it is extracted once and found.
func TestFailedExtractionNotRunAgainUnchanged(t *testing.T) {
	d := newDirs(t, "ada")
	write(t, d.home+"/memory/loop.pdf", "%PDF-1.4 loops\n")
	write(t, d.home+"/memory/real.pdf", "%PDF-1.4 real\n")
	a, log := openAgent(t, d)
	runs := map[string]int{}
	a.Extract = func(kind string, doc []byte) (string, error) {
		runs[string(doc)]++
		if strings.Contains(string(doc), "loops") {
			return "", errors.New("its text was not out within 30s")
		}
		return "persimmon " + strings.Fields(string(doc))[1] + "\n", nil
	}
	refresh := func() {
		t.Helper()
		if err := a.Refresh(); err != nil {
			t.Fatal(err)
		}
	}
	refresh()
	refresh()
	refresh()
	if runs["%PDF-1.4 loops\n"] != 1 || runs["%PDF-1.4 real\n"] != 1 {
		t.Fatalf("children run per document in three refreshes: %v, want one each", runs)
	}
	if got := mustSearch(t, a, "persimmon"); len(got) != 1 {
		t.Fatalf("the readable PDF: %v", got)
	}
	if n := strings.Count(strings.Join(log.lines, "\n"), "memory/loop.pdf left out: its text was not out within 30s"); n != 1 {
		t.Fatalf("the failure logged %d times: %v", n, log.lines)
	}
	// Changed (a newer time, the same size): extracted again.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(d.home+"/memory/loop.pdf", later, later); err != nil {
		t.Fatal(err)
	}
	refresh()
	if runs["%PDF-1.4 loops\n"] != 2 {
		t.Fatalf("a changed document was not extracted again: %v", runs)
	}
	// Changed to one that extracts: read and found.
	write(t, d.home+"/memory/loop.pdf", "%PDF-1.4 mended\n")
	refresh()
	refresh()
	if runs["%PDF-1.4 mended\n"] != 1 {
		t.Fatalf("the mended document: %v", runs)
	}
	if got := mustSearch(t, a, "mended"); len(got) != 1 {
		t.Fatalf("the mended document is not found: %v", got)
	}
}
