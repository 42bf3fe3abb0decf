package main

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory/extract"
	"lnk.dev/lnk/services/memory/service"
)

// realPDF is a PDF made by a real writer, its one page saying text.
func realPDF(t *testing.T, text string) []byte {
	p := fpdf.New("P", "mm", "A4", "")
	p.AddPage()
	p.SetFont("Helvetica", "", 14)
	p.Cell(40, 10, text)
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

// A real PDF's text comes back from the child; garbage, a page tree
// that loops and a page that allocates past 1 GiB each fail alone.
func TestExtractPDFChild(t *testing.T) {
	exe := testenv.Bin(t, "lnk-memory")
	text, err := extract.Run(context.Background(), exe, "pdf", realPDF(t, "persimmon tangerine"))
	if err != nil || !strings.Contains(text, "persimmon tangerine") {
		t.Fatalf("a real PDF: %q %v", text, err)
	}
	if _, err := extract.Run(context.Background(), exe, "pdf", []byte("%PDF-1.4 nothing")); err == nil || !strings.Contains(err.Error(), "not a PDF") {
		t.Errorf("garbage: %v", err)
	}
	if _, err := extract.Run(context.Background(), exe, "pdf", loopingPDF()); err == nil {
		t.Error("a PDF whose page tree holds itself was read")
	}
	start := time.Now()
	if _, err := extract.Run(context.Background(), exe, "pdf", bombPDF(t)); err == nil {
		t.Error("a PDF inflating past 1 GiB was read")
	} else {
		first, _, _ := strings.Cut(err.Error(), "\n")
		t.Logf("the bomb: %s (after %s)", first, time.Since(start).Round(time.Second))
	}
	if _, err := extract.Run(context.Background(), exe, "exe", []byte("x")); err == nil {
		t.Error("a kind of document no parser reads was run")
	}
}

// The service, confined and filtered, reads a real PDF beside one whose
// page tree loops and one that allocates past 1 GiB: each crafted one
// fails alone (said in its log), the real one is found, and the service
// still answers after them.
func TestServiceSurvivesCraftedPDFs(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
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
	cmd := exec.Command(testenv.Bin(t, "lnk-memory"), "serve", "--owner", "owner", "--agent", "ada=ada", "--idle", "2m")
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sock := home + "/Link/Agents/.memory/owner/run/" + service.SocketName
	var c net.Conn
	var err error
	for i := 0; i < 200; i++ {
		if c, err = net.Dial("unix", sock); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("no socket: %v\n%s", err, out.String())
	}
	fmt.Fprint(c, service.Hello+"ada\n")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: c, Writer: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
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
	for _, name := range []string{"memory/loop.pdf", "memory/bomb.pdf"} {
		if !strings.Contains(string(log), name) {
			t.Errorf("%s's failure is not in the log:\n%s", name, log)
		}
	}
}
