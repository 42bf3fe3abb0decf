package main

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory/extract"
)

// realPDF is a PDF made by a real writer, a page saying each text.
func realPDF(t *testing.T, text ...string) []byte {
	p := fpdf.New("P", "mm", "A4", "")
	p.SetFont("Helvetica", "", 14)
	for _, s := range text {
		p.AddPage()
		p.Cell(40, 10, s)
	}
	var b bytes.Buffer
	if err := p.Output(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// craftedPDF is a PDF of objs (object i+1 each), its xref table true.
func craftedPDF(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// loopingPDF's page tree holds itself: a parser walking it never ends.
func loopingPDF() []byte {
	return craftedPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [2 0 R] /Count 5 >>")
}

// loopingXrefPDF's cross-reference table names itself as the one before
// it (/Prev): the parser would read it again without end while it opens
// the file.
func loopingXrefPDF() []byte {
	doc := craftedPDF("<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << >> >>")
	xref := bytes.Index(doc, []byte("\nxref\n")) + 1
	return bytes.Replace(doc, []byte("/Root 1 0 R >>"), fmt.Appendf(nil, "/Root 1 0 R /Prev %d >>", xref), 1)
}

// slowPDF passes the checks before its pages (a page tree of one level,
// within the steps its bytes allow) and still runs past the child's
// limits: its one page, whose content is a MiB of operators that show
// nothing, is listed 20,000 times.
func slowPDF() []byte {
	content := strings.Repeat("q Q\n", 1<<18)
	return craftedPDF("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids ["+strings.Repeat("3 0 R ", 20000)+"] /Count 20000 >>",
		"<< /Type /Page /MediaBox [0 0 612 792] /Contents 4 0 R >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
}

var bomb struct {
	once sync.Once
	z    []byte
}

// bombPDF's one page's content inflates past the child's 1 GiB.
func bombPDF(t *testing.T) []byte {
	bomb.once.Do(func() {
		var z bytes.Buffer
		w, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
		zero := make([]byte, 1<<20)
		for i := 0; i < 1280; i++ {
			w.Write(zero)
		}
		w.Close()
		bomb.z = z.Bytes()
	})
	z := bytes.NewBuffer(bomb.z)
	return craftedPDF("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << >> >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.Bytes()))
}

// A real PDF's text comes back from the child, every page's; garbage
// fails alone; a page tree that holds itself is refused at once, its
// reason said, before a page is read, and so is a cross-reference table
// that is its own /Prev, as the file is opened; a page inflating past
// 1 GiB ends within the child's limits, and so does a document that
// passes those checks and still runs long (one costly page listed
// 20,000 times): the 30 s bound still holds.
//
// The slow one waits out the child's 30 s: it runs beside the other
// waiting tests (t.Parallel).
func TestExtractPDFChild(t *testing.T) {
	t.Parallel()
	exe := testenv.Bin(t, "lnk-memory")
	// The slow one in its own child meanwhile, waited for at the end.
	slow := make(chan error, 1)
	go func() {
		_, err := extract.Run(context.Background(), exe, "pdf", slowPDF())
		slow <- err
	}()
	defer func() {
		err := <-slow
		if err == nil || !strings.Contains(err.Error(), "not out within 30s") && !strings.Contains(err.Error(), "signal: ") {
			t.Errorf("a PDF past the checks that runs long: %v, want ended by the child's limits", err)
		}
	}()
	text, err := extract.Run(context.Background(), exe, "pdf", realPDF(t, "persimmon tangerine", "kumquat quince", "medlar"))
	if err != nil || !regexp.MustCompile(`(?s)persimmon tangerine.*kumquat quince.*medlar`).MatchString(text) {
		t.Fatalf("a real PDF of three pages: %q %v", text, err)
	}
	for name, c := range map[string]struct {
		doc  []byte
		want string
	}{
		"a page tree that holds itself":         {loopingPDF(), "its page tree is more than 256 levels deep"},
		"a cross-reference table its own /Prev": {loopingXrefPDF(), "cross-reference sections take more reading than twice the document"},
	} {
		if _, err := extract.Run(context.Background(), exe, "pdf", c.doc); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want refused: %s", name, err, c.want)
		}
	}
	if _, err := extract.Run(context.Background(), exe, "pdf", []byte("%PDF-1.4 nothing")); err == nil || !strings.Contains(err.Error(), "not a PDF") {
		t.Errorf("garbage: %v", err)
	}
	// A page inflating to 1.25 GiB: the parser streams it, so it is
	// bounded by the child's limits (its CPU, its wall, its 2 MiB of
	// text), never by the service's memory: an error or a bounded text.
	start := time.Now()
	if text, err := extract.Run(context.Background(), exe, "pdf", bombPDF(t)); err == nil && len(text) > extract.MaxText {
		t.Errorf("a PDF inflating to 1.25 GiB gave %d bytes of text", len(text))
	} else if err != nil {
		first, _, _ := strings.Cut(err.Error(), "\n")
		t.Logf("the bomb: %s (after %s)", first, time.Since(start).Round(time.Second))
	}
	if _, err := extract.Run(context.Background(), exe, "exe", []byte("x")); err == nil {
		t.Error("a kind of document no parser reads was run")
	}
}

// The service, confined and filtered, reads a real PDF beside one whose
// page tree loops (refused at once, its reason in the log) and one
// inflating past 1 GiB (bounded by its child's limits): the real one is
// found, and the service still answers after them.
//
// The inflating PDF may wait out its child's 30 s: it runs beside the
// other waiting tests (t.Parallel).
func TestServiceSurvivesCraftedPDFs(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	t.Parallel()
	home := t.TempDir()
	mem := home + "/Link/Agents/ada/Home/memory"
	os.MkdirAll(mem, 0o700)
	os.MkdirAll(home+"/Link/Agents/ada/Agent", 0o700)
	for _, d := range []string{home + "/Link", home + "/Link/Agents"} {
		os.Chmod(d, 0o700)
	}
	for name, doc := range map[string][]byte{"real.pdf": realPDF(t, "persimmon tangerine"), "loop.pdf": loopingPDF(), "bomb.pdf": bombPDF(t)} {
		if err := os.WriteFile(filepath.Join(mem, name), doc, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cs, out := startServe(t, home)
	search := func(words string) string {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"words": words}})
		if err != nil {
			t.Fatalf("the service after the crafted PDFs: %v\n%s", err, out.String())
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := search("persimmon"); !strings.Contains(got, "memory/real.pdf") {
		t.Errorf("the real PDF: %q", got)
	}
	if got := search("tangerine"); !strings.Contains(got, "memory/real.pdf") {
		t.Errorf("the service after the crafted PDFs: %q", got)
	}
	log, _ := os.ReadFile(home + "/Link/Agents/.memory/owner/memory.log")
	if !regexp.MustCompile(`memory/loop\.pdf left out: .*its page tree is more than 256 levels deep`).Match(log) {
		t.Errorf("the looping PDF's refusal and its reason are not in the log:\n%s", log)
	}
}

// TestExtractChildLimits reads the limits back from a running child
// (/proc/PID/limits), which waits on its document: 30 s of CPU, 1 GiB of
// data, no core dump.
func TestExtractChildLimits(t *testing.T) {
	cmd := exec.Command(testenv.Bin(t, "lnk-memory"), "extract", "pdf")
	cmd.Env = []string{}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	want := map[string]string{"Max cpu time": "30", "Max data size": "1073741824", "Max core file size": "0"}
	var limits string
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", cmd.Process.Pid))
		limits = string(b)
		if all(limits, want) {
			return
		}
	}
	t.Fatalf("the child's limits, want %v:\n%s", want, limits)
}

// all reports whether each limit in want has its soft and hard value in
// /proc/PID/limits' text.
func all(limits string, limit map[string]string) bool {
	want := maps.Clone(limit)
	for _, line := range strings.Split(limits, "\n") {
		for name, v := range want {
			if strings.HasPrefix(line, name) {
				f := strings.Fields(strings.TrimPrefix(line, name))
				if len(f) < 2 || f[0] != v || f[1] != v {
					return false
				}
				delete(want, name)
			}
		}
	}
	return len(want) == 0
}
