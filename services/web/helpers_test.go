package web

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"lnk.dev/lnk/internal/netclass"
	"lnk.dev/lnk/internal/testenv"
)

// The test's world, in a network namespace of its own (testenv.InNetns)
// beside one of test hosts (testenv.NewHosts) joined by a veth pair. On
// the hosts' end, an address of each class the tool refuses, and one
// public host; on the test's end, its "own" addresses in the same
// prefixes. No address names anything off this machine: the public ones
// are documentation addresses, in namespaces the test made.
const (
	publicHost  = "203.0.113.2"   // the public test host
	ownAddr     = "203.0.113.1"   // the test's own end: one of this machine's addresses
	publicHost6 = "2001:db8:9::2" // the public test host's IPv6 address
)

var classHosts = map[string]netclass.Class{
	"10.9.0.2":        netclass.Private,
	"172.16.9.2":      netclass.Private,
	"192.168.9.2":     netclass.Private,
	"100.64.9.2":      netclass.CGNAT,
	"169.254.9.2":     netclass.LinkLocal,
	"169.254.169.254": netclass.Metadata,
	"168.63.129.16":   netclass.Metadata,
	"100.100.100.200": netclass.Metadata,
	"198.18.9.2":      netclass.Reserved,
}

func pairs() []testenv.AddrPair {
	p := func(ours, theirs string) testenv.AddrPair {
		return testenv.AddrPair{Ours: netip.MustParsePrefix(ours), Theirs: netip.MustParsePrefix(theirs)}
	}
	return []testenv.AddrPair{
		p(ownAddr+"/24", publicHost+"/24"),
		p("10.9.0.1/24", "10.9.0.2/24"),
		p("172.16.9.1/24", "172.16.9.2/24"),
		p("192.168.9.1/24", "192.168.9.2/24"),
		p("100.64.9.1/24", "100.64.9.2/24"),
		p("169.254.9.1/16", "169.254.9.2/16"),
		p("169.254.169.1/16", "169.254.169.254/16"),
		p("168.63.129.1/24", "168.63.129.16/24"),
		p("100.100.100.1/24", "100.100.100.200/24"),
		p("198.18.9.1/24", "198.18.9.2/24"),
		p("2001:db8:9::1/64", publicHost6+"/64"),
		p("fd00:9::1/64", "fd00:9::2/64"),
	}
}

// world is one test's hosts, servers and tool.
type world struct {
	t     *testing.T
	hosts *testenv.Hosts
	hits  *hitLog // what each server saw, by the address it was reached on
	res   *mapResolver
	own   *netclass.OwnWatch
	ca    *x509.CertPool
	mux   *http.ServeMux
}

// hitLog counts requests by the local address that took them.
type hitLog struct {
	mu sync.Mutex
	by map[string]int
}

func (h *hitLog) add(r *http.Request) {
	a, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	h.mu.Lock()
	defer h.mu.Unlock()
	if a != nil {
		host, _, _ := net.SplitHostPort(a.String())
		h.by[host]++
	}
}

func (h *hitLog) count(host string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.by[host]
}

func (h *hitLog) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.by {
		n += c
	}
	return n
}

// newWorld makes the hosts, serves mux on port 80 and 443 (TLS) of every
// host address and on 0.0.0.0:80 of the test's own namespace (loopback
// and its own addresses), and learns the own addresses as lnk-web does.
// It returns nil in the parent of InNetns (the child ran the test).
func newWorld(t *testing.T) *world {
	t.Helper()
	if !testenv.InNetns(t) {
		return nil
	}
	hosts, err := testenv.NewHosts("lnkweb0", pairs())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, hosts: hosts, hits: &hitLog{by: map[string]int{}}, res: &mapResolver{m: map[string][]netip.Addr{}}, mux: http.NewServeMux()}
	handler := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.hits.add(r)
		w.mux.ServeHTTP(rw, r)
	})
	for _, port := range []string{"80", "443"} {
		ln, err := hosts.Listen("tcp", "0.0.0.0:"+port)
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewUnstartedServer(handler)
		s.Listener.Close()
		s.Listener = ln
		if port == "443" {
			s.StartTLS()
			w.ca = x509.NewCertPool()
			w.ca.AddCert(s.Certificate())
		} else {
			s.Start()
		}
		t.Cleanup(s.Close)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:80")
	if err != nil {
		t.Fatal(err)
	}
	local := &http.Server{Handler: handler}
	go local.Serve(ln)
	t.Cleanup(func() { local.Close() })
	if w.own, err = netclass.WatchOwnAddrs(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.own.Close() })
	w.mux.HandleFunc("/page", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(rw, "<html><head><title>A test page</title><script>alert(1)</script></head><body><h1>Hello</h1><p>From <a href=\"/next\">the host</a>.</p><img src=\"/x.png\"><form action=\"/f\"><input name=q></form></body></html>")
	})
	w.mux.HandleFunc("/to", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, r.URL.Query().Get("u"), http.StatusFound)
	})
	return w
}

// tool is a Link Web tool in the world: its resolver, its own set, the
// hosts' CA; cfg's other settings as given.
func (w *world) tool(cfg Config) (*Web, *testenv.SyncBuffer) {
	w.t.Helper()
	log := &testenv.SyncBuffer{}
	cfg.Resolver, cfg.Own, cfg.Log = w.res, w.own, log
	tool, err := New(cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	tool.SetTLS(&tls.Config{RootCAs: w.ca})
	return tool, log
}

// mapResolver answers the names a test gave it, never DNS, and counts
// its lookups.
type mapResolver struct {
	mu      sync.Mutex
	m       map[string][]netip.Addr
	lookups map[string]int
}

func (r *mapResolver) set(name string, addrs ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var as []netip.Addr
	for _, a := range addrs {
		as = append(as, netip.MustParseAddr(a))
	}
	r.m[name] = as
}

func (r *mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lookups == nil {
		r.lookups = map[string]int{}
	}
	r.lookups[host]++
	if as, ok := r.m[host]; ok {
		return as, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

// refused fetches u and wants a refusal whose reason holds want.
func refused(t *testing.T, tool *Web, u, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := tool.Fetch(ctx, u)
	r, ok := asRefusal(err)
	if !ok || !strings.Contains(r.Reason, want) {
		got := "no page"
		if p != nil {
			got = fmt.Sprintf("a page (status %d, %d bytes)", p.Status, len(p.Text))
		}
		t.Errorf("fetch %s = %s, %v; want a refusal saying %q", u, got, err, want)
	}
}

// fetched fetches u and wants a page.
func fetched(t *testing.T, tool *Web, u string) *Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := tool.Fetch(ctx, u)
	if err != nil {
		t.Fatalf("fetch %s: %v", u, err)
	}
	return p
}
