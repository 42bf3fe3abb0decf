package netbroker

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

const hostKey = "ghp-REAL-host-key-7c1d2e3f4a5b6978"

// reflectingHost is a sealed secret's host that hands back what it was
// sent in every way a hostile sandbox could use to read the value back:
// its headers (compressed when asked), a stored body (whole, by Range,
// base64), a query or body in base64, and a header by Range. It answers
// 401 to a request whose Authorization is not the real value: each 200
// is the positive control that the value still authenticates.
type reflectingHost struct {
	mu     sync.Mutex
	stored []byte
	auths  []string
}

func (h *reflectingHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.auths = append(h.auths, r.Header.Get("Authorization"))
	h.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+hostKey {
		http.Error(w, "bad credentials", http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(r.Body)
	gz := func(b []byte) {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write(b)
		zw.Close()
	}
	switch r.URL.Path {
	case "/headers": // httpbin's /headers: compressed when asked
		j, _ := json.Marshal(r.Header)
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			gz(j)
			return
		}
		w.Write(j)
	case "/always-gzip": // compressed, asked or not
		j, _ := json.Marshal(r.Header)
		gz(j)
	case "/reflect": // a header reflected, served by Range when asked
		http.ServeContent(w, r, "", time.Time{}, strings.NewReader("you authenticated as: "+r.Header.Get("Authorization")))
	case "/partial": // a part, asked for or not
		v := r.Header.Get("Authorization")
		w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-9/%d", len(v)))
		w.WriteHeader(http.StatusPartialContent)
		io.WriteString(w, v[:10])
	case "/store": // a body stored and read back, by Range when asked
		h.mu.Lock()
		if r.Method == "PUT" {
			h.stored = body
			h.mu.Unlock()
			w.WriteHeader(http.StatusCreated)
			return
		}
		stored := h.stored
		h.mu.Unlock()
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(stored))
	case "/b64": // a server-side transform of what it was sent
		h.mu.Lock()
		stored := h.stored
		h.mu.Unlock()
		enc := base64.StdEncoding.EncodeToString
		fmt.Fprintf(w, "%s|%s|%s", enc([]byte(r.URL.Query().Get("v"))), enc(body), enc(stored))
	default:
		http.NotFound(w, r)
	}
}

// A hostile sandbox tries, against the real proxy and a real keybroker,
// every way issue #22 names to read a sealed secret back through its own
// host: the reflected header compressed (Accept-Encoding: gzip, and a
// host that compresses unasked), in Range pieces, a body holding the
// placeholder stored and read back (whole, in pieces, base64), and a
// query or body the host base64-encodes. None returns the value; each
// request the host answered 200 authenticated with the value in
// Authorization, where the grant puts it.
func TestSealedValueNeverReadBack(t *testing.T) {
	if !inNetns(t) {
		return
	}
	host := &reflectingHost{}
	pool := httpsAt(t, publicAddr+":443", host)
	sp := startSealedProxy(t, pool, sealedGrant{name: "GITHUB_TOKEN", value: hostKey})
	ph := sp.told.Placeholders["GITHUB_TOKEN"]
	auth := "Authorization: Bearer " + ph
	var seen bytes.Buffer // every byte the sandbox was answered, decoded where it can be
	leaked := func(what string, b []byte) {
		t.Helper()
		seen.Write(b)
		if bytes.Contains(b, []byte(hostKey)) {
			t.Errorf("%s: the value came back: %q", what, b)
		}
	}
	ok := func(what string, resp *http.Response, want int) {
		t.Helper()
		if resp.StatusCode != want {
			t.Errorf("%s: %s, want %d", what, resp.Status, want)
		}
	}

	// The reflected header, with Accept-Encoding: gzip.
	resp, b := sp.do(t, "GET", "GITHUB_TOKEN", "/headers", []string{auth, "Accept-Encoding: gzip"}, "")
	ok("gzip", resp, 200)
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		b, _ = io.ReadAll(zr)
	}
	leaked("gzip", b)
	if !bytes.Contains(b, []byte(ph)) {
		t.Errorf("gzip: the reflected header was not answered as the placeholder: %q", b)
	}

	// A host that compresses unasked is refused: the scrub can't read it.
	resp, b = sp.do(t, "GET", "GITHUB_TOKEN", "/always-gzip", []string{auth}, "")
	if resp.StatusCode != 502 || !strings.Contains(string(b), "Content-Encoding") {
		t.Errorf("a host compressing unasked: %s %q", resp.Status, b)
	}
	if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
		b, _ = io.ReadAll(zr)
	}
	leaked("always-gzip", b)
	resp, b = sp.do(t, "GET", "GITHUB_TOKEN", "/partial", []string{auth}, "")
	if resp.StatusCode != 502 || bytes.Contains(b, []byte(hostKey[:10])) {
		t.Errorf("a host answering a part unasked: %s %q", resp.Status, b)
	}

	// The reflected header by Range, 12 bytes at a time.
	var pieces []byte
	for off := 0; off < 80; off += 12 {
		resp, b := sp.do(t, "GET", "GITHUB_TOKEN", "/reflect", []string{auth, fmt.Sprintf("Range: bytes=%d-%d", off, off+11)}, "")
		ok("range", resp, 200)
		pieces = append(pieces, b...)
	}
	leaked("range", pieces)

	// A body holding the placeholder, stored and read back.
	resp, _ = sp.do(t, "PUT", "GITHUB_TOKEN", "/store", []string{auth}, "my token is "+ph)
	ok("store", resp, 201)
	host.mu.Lock()
	stored := string(host.stored)
	host.mu.Unlock()
	if stored != "my token is "+ph {
		t.Errorf("the host stored %q, want the placeholder as sent", stored)
	}
	resp, b = sp.do(t, "GET", "GITHUB_TOKEN", "/store", []string{auth}, "")
	ok("stored, whole", resp, 200)
	leaked("stored, whole", b)
	pieces = nil
	for off := 0; off < 80; off += 7 {
		resp, b := sp.do(t, "GET", "GITHUB_TOKEN", "/store", []string{auth, fmt.Sprintf("Range: bytes=%d-%d", off, off+6)}, "")
		ok("stored, by range", resp, 200)
		pieces = append(pieces, b...)
	}
	leaked("stored, by range", pieces)

	// A server-side transform: base64 of the query, the body and the
	// stored body.
	resp, b = sp.do(t, "POST", "GITHUB_TOKEN", "/b64?v="+ph, []string{auth}, ph)
	ok("base64", resp, 200)
	parts := strings.Split(string(b), "|")
	if len(parts) != 3 {
		t.Fatalf("base64: %q", b)
	}
	for i, p := range parts {
		d, err := base64.StdEncoding.DecodeString(p)
		if err != nil {
			t.Fatalf("base64 part %d: %v", i, err)
		}
		leaked(fmt.Sprintf("base64 of %s", []string{"the query", "the body", "the stored body"}[i]), d)
		if !bytes.Contains(d, []byte(ph)) {
			t.Errorf("base64 part %d is %q, want the placeholder as sent", i, d)
		}
	}

	host.mu.Lock()
	auths := append([]string(nil), host.auths...)
	host.mu.Unlock()
	for _, a := range auths {
		if a != "Bearer "+hostKey {
			t.Errorf("the host was sent Authorization %q, not the value", a)
		}
	}
	if seen.Len() == 0 || len(auths) < 10 {
		t.Fatalf("the attacks did not run: %d requests", len(auths))
	}
	sp.noSecretsLogged(t, hostKey)
}

// A request that puts the placeholder only where the value never goes
// (a header the grant doesn't name, the query) is refused 403, saying
// which header to name and how, and never reaches the host; in the
// granted header it passes (the positive control).
func TestSealedPlaceholderOutsideItsHeaders(t *testing.T) {
	if !inNetns(t) {
		return
	}
	host := &reflectingHost{}
	pool := httpsAt(t, publicAddr+":443", host)
	sp := startSealedProxy(t, pool, sealedGrant{name: "GITHUB_TOKEN", value: hostKey})
	ph := sp.told.Placeholders["GITHUB_TOKEN"]
	for _, tc := range []struct {
		path, head, hint string
	}{
		{"/headers", "X-Api-Key: " + ph, "hint: lnk secret remove GITHUB_TOKEN, then lnk secret create GITHUB_TOKEN --internet-host example.com --header X-Api-Key"},
		{"/headers?access_token=" + ph, "Accept: */*", "--header HEADER"},
	} {
		resp, b := sp.do(t, "GET", "GITHUB_TOKEN", tc.path, []string{tc.head}, "")
		if resp.StatusCode != 403 || !strings.Contains(string(b), "goes only in Authorization") || !strings.Contains(string(b), tc.hint) {
			t.Errorf("%s %s: %s %q", tc.path, tc.head, resp.Status, b)
		}
	}
	host.mu.Lock()
	if len(host.auths) != 0 {
		t.Errorf("a refused request reached the host: %q", host.auths)
	}
	host.mu.Unlock()
	resp, b := sp.do(t, "GET", "GITHUB_TOKEN", "/headers?access_token="+ph, []string{"Authorization: Bearer " + ph, "X-Api-Key: " + ph}, "")
	if resp.StatusCode != 200 || bytes.Contains(b, []byte(hostKey)) {
		t.Errorf("the placeholder in Authorization: %s %q", resp.Status, b)
	}
	sp.log.waitFor(t, func(e Event) bool {
		return e.Decision == "refuse" && strings.Contains(e.Reason, "puts its placeholder in X-Api-Key")
	})
	sp.noSecretsLogged(t, hostKey, ph)
}
