package netbroker

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// httpServer serves h on addr; closed in Cleanup.
func httpServer(t *testing.T, addr string, h http.HandlerFunc) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	t.Cleanup(func() { srv.Close(); <-done })
}

var internetGrants = Grants{Internet: InternetGrants{On: true, Hosts: []string{"*.example.test"}}}

// In a network namespace of its own: a granted name on a public address
// is reached by CONNECT and by absolute-form GET; the bare domain is not.
func TestReachesGrantedPublicHost(t *testing.T) {
	if !inNetns(t) {
		return
	}
	echoServer(t, publicAddr+":443")
	httpServer(t, publicAddr+":80", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s %s", r.Host, r.URL.Path)
	})
	tp := startProxy(t, internetGrants, func(c *Config) {
		c.Resolver = mapResolver{"api.example.test": addrs(publicAddr), "example.test": addrs(publicAddr)}
	})
	resp, _, c, br := tp.ask(t, "CONNECT api.example.test:443 HTTP/1.1\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %s", resp.Status)
	}
	io.WriteString(c, "ping")
	b := make([]byte, 4)
	if _, err := io.ReadFull(br, b); err != nil || string(b) != "ping" {
		t.Fatalf("tunnel: %q %v", b, err)
	}
	resp, body, _, _ := tp.ask(t, "GET http://api.example.test/x HTTP/1.1\r\nHost: api.example.test\r\n\r\n")
	if resp.StatusCode != 200 || body != "hello api.example.test /x" {
		t.Fatalf("GET: %s %q", resp.Status, body)
	}
	resp, body, _, _ = tp.ask(t, "CONNECT example.test:443 HTTP/1.1\r\n\r\n")
	if resp.StatusCode != 403 || !strings.Contains(body, "--internet-host example.test") {
		t.Fatalf("bare domain: %s %q", resp.Status, body)
	}
}

// This machine's own addresses are refused even for a granted name.
func TestRefusesOwnAddress(t *testing.T) {
	if !inNetns(t) {
		return
	}
	echoServer(t, publicAddr+":443")
	tp := startProxy(t, internetGrants, func(c *Config) {
		c.Resolver = mapResolver{"api.example.test": addrs(publicAddr)}
		c.Own = nil // this namespace's own: 203.0.113.10 is on its loopback
	})
	resp, body, _, _ := tp.ask(t, "CONNECT api.example.test:443 HTTP/1.1\r\n\r\n")
	if resp.StatusCode != 403 || !strings.Contains(body, "an address of this machine's own") {
		t.Fatalf("got %s %q", resp.Status, body)
	}
}

// A redirect toward the metadata service is passed back, never
// followed, and the next request for it is refused: the metadata server,
// reachable at the network level here, sees no request at all.
func TestRedirectTowardMetadata(t *testing.T) {
	if !inNetns(t) {
		return
	}
	var hits atomic.Int32
	httpServer(t, metadataAddr+":80", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "secret-credentials")
	})
	httpServer(t, publicAddr+":80", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	grants := Grants{Internet: InternetGrants{On: true}}
	tp := startProxy(t, grants, func(c *Config) {
		c.Resolver = mapResolver{"api.example.test": addrs(publicAddr), "rebind.example.test": addrs(metadataAddr)}
	})
	resp, _, _, _ := tp.ask(t, "GET http://api.example.test/ HTTP/1.1\r\nHost: api.example.test\r\n\r\n")
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "http://169.254.169.254/latest/meta-data/" {
		t.Fatalf("redirect: %s %v", resp.Status, resp.Header)
	}
	for _, req := range []string{
		"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n",
		"GET http://rebind.example.test/latest/meta-data/ HTTP/1.1\r\nHost: rebind.example.test\r\n\r\n",
		"CONNECT [::ffff:169.254.169.254]:80 HTTP/1.1\r\n\r\n",
	} {
		resp, body, _, _ := tp.ask(t, req)
		if resp.StatusCode != 403 || strings.Contains(body, "secret-credentials") {
			t.Fatalf("%q: %s %q", firstLine(req), resp.Status, body)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the metadata server was reached %d times", n)
	}
}

// rebindingResolver answers a public address first, then loopback: the
// proxy must dial the address it checked, never look the name up again.
type rebindingResolver struct {
	mu    sync.Mutex
	calls int
}

func (r *rebindingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.calls == 1 {
		return addrs(publicAddr), nil
	}
	return addrs("127.0.0.1"), nil
}

func TestNoDNSRebinding(t *testing.T) {
	if !inNetns(t) {
		return
	}
	var public, loop atomic.Int32
	httpServer(t, publicAddr+":80", func(w http.ResponseWriter, r *http.Request) { public.Add(1) })
	httpServer(t, "127.0.0.1:80", func(w http.ResponseWriter, r *http.Request) { loop.Add(1) })
	res := &rebindingResolver{}
	tp := startProxy(t, internetGrants, func(c *Config) { c.Resolver = res })
	resp, _, _, _ := tp.ask(t, "GET http://api.example.test/ HTTP/1.1\r\nHost: api.example.test\r\n\r\n")
	if resp.StatusCode != 200 || public.Load() != 1 || loop.Load() != 0 || res.calls != 1 {
		t.Fatalf("%s: public %d, loopback %d, lookups %d", resp.Status, public.Load(), loop.Load(), res.calls)
	}
}
