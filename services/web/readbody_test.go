package web

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
)

// TestChunkedBodyReadOnce: a page sent chunked (no Content-Length) is
// read into one buffer, not grown from a few hundred bytes by doubling
// (each step a new buffer, the page copied into it): reading a 100 KB
// page allocates well under twice the page. A page larger than the first
// buffer, and one the server gave a length, are read whole too.
func TestChunkedBodyReadOnce(t *testing.T) {
	pages := map[string][]byte{"/100k": bytes.Repeat([]byte("0123456789abcdef"), 100<<10/16), "/300k": bytes.Repeat([]byte("x"), 300<<10)}
	s := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("length") {
			rw.Header().Set("Content-Length", "102400")
		}
		rw.Write(pages[r.URL.Path])
	}))
	defer s.Close()
	read := func(u string) ([]byte, uint64, *http.Response) {
		resp, err := http.Get(s.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		b, err := readBody(resp)
		runtime.ReadMemStats(&m1)
		if err != nil {
			t.Fatal(err)
		}
		return b, m1.TotalAlloc - m0.TotalAlloc, resp
	}
	for _, u := range []string{"/100k", "/300k", "/100k?length"} {
		b, _, resp := read(u)
		if want := pages[resp.Request.URL.Path]; !bytes.Equal(b, want) {
			t.Errorf("%s: read %d bytes, not the page's %d", u, len(b), len(want))
		}
		if chunked := len(resp.TransferEncoding) > 0; chunked != (u != "/100k?length") {
			t.Errorf("%s: chunked %v: the server did not send what the test means", u, chunked)
		}
	}
	best := ^uint64(0)
	for i := 0; i < 5; i++ { // the client's own goroutines may allocate meanwhile: the least of five
		_, n, _ := read("/100k")
		best = min(best, n)
	}
	if page := uint64(len(pages["/100k"])); best > page*3/2 {
		t.Errorf("reading a chunked %d-byte page allocated %d bytes: grown, not read once", page, best)
	}
}
