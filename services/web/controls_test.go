package web

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPlainTextControls: a page served as text/plain (or as JSON) comes to
// the model without NUL and the other C0 controls, as an HTML page does;
// tab, newline and CR are kept, and so is the text around each control
// (the control). Before, the text path passed every control through.
func TestPlainTextControls(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("pub.example.com", publicHost)
	const hostile = "a\x00b\x01c\x1b[31md\x7fe\tf\r\ng\x08h\xffi"
	const want = "abc[31md\x7fe\tf\r\ngh\uFFFDi"
	for _, typ := range []string{"text/plain", "application/json"} {
		w.mux.HandleFunc("/"+typ, func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Content-Type", typ)
			io.WriteString(rw, hostile)
		})
	}
	w.mux.HandleFunc("/html", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html")
		io.WriteString(rw, "<html><body><p>x\x00y\x01z\x1bw</p></body></html>")
	})
	tool, _ := w.tool(Config{Timeout: 5 * time.Second})
	for _, typ := range []string{"text/plain", "application/json"} {
		if p := fetched(t, tool, "http://pub.example.com/"+typ); p.Text != want {
			t.Errorf("%s came as %q, want %q", typ, p.Text, want)
		}
	}
	if p := fetched(t, tool, "http://pub.example.com/html"); p.Text != "xyzw" {
		t.Errorf("the HTML page came as %q, want %q", p.Text, "xyzw")
	}
	// A page nested past MaxDepth, given as plain text, the same.
	deep := strings.Repeat("<div>", MaxDepth+10) + "x\x01y\x1bz"
	if _, text := plainText([]byte(deep)); text != "xyz\n" {
		t.Errorf("the deep page came as %q, want %q", text, "xyz\n")
	}
}
