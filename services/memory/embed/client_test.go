package embed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lnk.dev/lnk/services/harness/builtin"
)

// serve runs h on a loopback listener and returns its address.
func serve(t *testing.T, ln net.Listener, h http.Handler) *http.Server {
	t.Helper()
	s := &http.Server{Handler: h}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s
}

func listen(t *testing.T, addr string) (net.Listener, netip.AddrPort) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return ln, netip.MustParseAddrPort(ln.Addr().String())
}

func TestParseAddrOnlyLoopback(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:8080", "[::1]:1", "127.3.2.1:65535"} {
		if _, err := ParseAddr(ok); err != nil {
			t.Errorf("ParseAddr(%q) = %v, want accepted", ok, err)
		}
	}
	for _, bad := range []string{"", "localhost:80", "0.0.0.0:80", "[::]:80", "127.0.0.1", "127.0.0.1:0", "[fe80::1%lo]:80", "http://127.0.0.1:80", "127.0.0.1:80/x"} {
		if _, err := ParseAddr(bad); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("ParseAddr(%q) = %v, want refused", bad, err)
		}
	}
	if _, err := New(netip.MustParseAddrPort("0.0.0.0:80"), Retry, nil); err == nil {
		t.Error("New accepted the unspecified address")
	}
}

// The built-in model's vectors come back, each for its text.
func TestEmbedFromTheBuiltinModel(t *testing.T) {
	ln, ap := listen(t, "127.0.0.1:0")
	serve(t, ln, builtin.Handler(builtin.Options{}))
	c, err := New(ap, Retry, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Start(context.Background(), StartWait) {
		t.Fatal("the built-in model did not answer")
	}
	v, err := c.Embed(context.Background(), []string{"kumquat", "fig"})
	if err != nil || len(v) != 2 {
		t.Fatalf("%v %v", v, err)
	}
	want := builtin.Embed("fig")
	for i := range want {
		if d := v[1][i] - want[i]; d > 1e-6 || d < -1e-6 {
			t.Fatalf("vector 1 is not fig's")
		}
	}
}

// A redirect is refused and its target never asked; the same server
// answering without one is used (the positive control).
func TestRedirectRefused(t *testing.T) {
	var followed, redirect atomic.Bool
	redirect.Store(true)
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		if redirect.Load() {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
			return
		}
		builtin.Handler(builtin.Options{}).ServeHTTP(w, r)
	})
	mux.HandleFunc("/elsewhere", func(w http.ResponseWriter, r *http.Request) {
		followed.Store(true)
		builtin.Handler(builtin.Options{}).ServeHTTP(w, r)
	})
	ln, ap := listen(t, "127.0.0.1:0")
	serve(t, ln, mux)
	c, _ := New(ap, time.Millisecond, t.Logf)
	if _, err := c.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("a redirect: %v", err)
	}
	if followed.Load() {
		t.Error("the redirect was followed")
	}
	redirect.Store(false)
	time.Sleep(5 * time.Millisecond)
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Errorf("without the redirect: %v", err)
	}
}

// An answer one byte past 64 MiB is cut and unused, though it would
// decode (spaces before a good answer); one just within is used.
func TestAnswerPast64MiBCut(t *testing.T) {
	good := `{"data":[{"index":0,"embedding":[1,0]}]}`
	var pad atomic.Int64
	ln, ap := listen(t, "127.0.0.1:0")
	serve(t, ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat(" ", int(pad.Load()))))
		fmt.Fprint(w, good)
	}))
	c, _ := New(ap, time.Millisecond, t.Logf)
	pad.Store(int64(MaxAnswer - len(good)))
	if v, err := c.Embed(context.Background(), []string{"x"}); err != nil || len(v) != 1 {
		t.Fatalf("an answer of exactly 64 MiB: %v", err)
	}
	pad.Add(1)
	time.Sleep(5 * time.Millisecond)
	if _, err := c.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "past") {
		t.Errorf("an answer past 64 MiB: %v", err)
	}
}

// The model going away mid-run: the call fails, later ones are ErrDown
// (words only) until the retry is due, and after it the model, back on
// its port, is used again.
func TestModelGoneAndBack(t *testing.T) {
	ln, ap := listen(t, "127.0.0.1:0")
	s := serve(t, ln, builtin.Handler(builtin.Options{}))
	const retry = 500 * time.Millisecond
	c, _ := New(ap, retry, t.Logf)
	if !c.Start(context.Background(), StartWait) {
		t.Fatal("no answer at start")
	}
	s.Close()
	if _, err := c.Embed(context.Background(), []string{"x"}); err == nil || c.Up() {
		t.Fatalf("with the model gone: %v, up %v", err, c.Up())
	}
	ln2, _ := listen(t, ap.String())
	serve(t, ln2, builtin.Handler(builtin.Options{}))
	if _, err := c.Embed(context.Background(), []string{"x"}); !errors.Is(err, ErrDown) {
		t.Fatalf("before the retry is due: %v, want ErrDown", err)
	}
	time.Sleep(retry + 100*time.Millisecond)
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil || !c.Up() {
		t.Fatalf("after the retry: %v", err)
	}
}

// decode refuses answers that do not fit the texts asked.
func TestDecodeRefuses(t *testing.T) {
	for _, bad := range []string{
		`{"data":[]}`,
		`{"data":[{"index":1,"embedding":[1]}]}`,
		`{"data":[{"index":0,"embedding":[]}]}`,
		`nope`,
	} {
		if _, err := decode([]byte(bad), 1); err == nil {
			t.Errorf("decode(%s) accepted", bad)
		}
	}
	if _, err := decode([]byte(`{"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`), 2); err != nil {
		t.Errorf("a good answer out of order: %v", err)
	}
	if _, err := decode([]byte(`{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[1]}]}`), 2); err == nil {
		t.Error("an index twice accepted")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":0,"embedding":[1,2]}]}`), 1)
	f.Add([]byte(`{"data":[{"index":1,"embedding":[1e308,1e308]},{"index":0,"embedding":[3,4]}]}`), 2)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		v, err := decode(b, n)
		if err != nil {
			return
		}
		for _, x := range v {
			if x == nil || len(x) != len(v[0]) {
				t.Fatalf("accepted %q as %v", b, v)
			}
		}
	})
}
