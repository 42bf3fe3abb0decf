package netbroker

import (
	"bufio"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// mapResolver plays DNS for tests: names map to loopback or namespace
// addresses, so nothing is ever looked up off the machine.
type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

// ownList is a fixed set of this machine's own addresses, for tests
// whose stand-in hosts sit on addresses of the test's own namespace,
// which the proxy's real set ([OwnWatch]) would refuse.
type ownList []netip.Addr

func (l ownList) AnyOwn(as ...netip.Addr) (bool, error) {
	for _, a := range as {
		for _, o := range l {
			if a.Unmap().WithZone("") == o {
				return true, nil
			}
		}
	}
	return false, nil
}

// eventLog collects the proxy's log for a test to read.
type eventLog struct {
	mu sync.Mutex
	ev []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ev = append(l.ev, e)
}

func (l *eventLog) all() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Event(nil), l.ev...)
}

// waitFor polls until some event satisfies ok, for up to 20 s: the log
// line is written after the answer, so it may trail it.
func (l *eventLog) waitFor(t *testing.T, ok func(Event) bool) Event {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range l.all() {
			if ok(e) {
				return e
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no such event in the log: %+v", l.all())
	return Event{}
}

type testProxy struct {
	socket string
	log    *eventLog
	proxy  *Proxy
}

// startProxy serves a proxy for grants c on a unix socket in a temporary
// folder; edit adjusts its Config. The proxy is closed in Cleanup.
func startProxy(t *testing.T, c Grants, edit func(*Config)) *testProxy {
	t.Helper()
	if c.AgentName == "" {
		c.AgentName = "agent"
	}
	rules, err := RulesFrom(&c)
	if err != nil {
		t.Fatal(err)
	}
	tp := &testProxy{socket: filepath.Join(t.TempDir(), "proxy.sock"), log: &eventLog{}}
	cfg := Config{Rules: rules, Resolver: mapResolver{}, Own: ownList{}, Log: tp.log.add}
	if edit != nil {
		edit(&cfg)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", tp.socket)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Serve(ln); close(done) }()
	t.Cleanup(func() { p.Close(); <-done })
	tp.proxy = p
	return tp
}

// dial opens a connection to the proxy, closed in Cleanup.
func (tp *testProxy) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", tp.socket)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

// ask sends raw on a new connection and reads the answer's head.
func (tp *testProxy) ask(t *testing.T, raw string) (*http.Response, string, net.Conn, *bufio.Reader) {
	t.Helper()
	c := tp.dial(t)
	// A refusal may come, and the proxy close, before the whole request
	// is written: the answer is read all the same.
	io.WriteString(c, raw)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", firstLine(raw), err)
	}
	body := ""
	if resp.StatusCode != 200 || !strings.HasPrefix(raw, "CONNECT") {
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
	}
	return resp, body, c, br
}

// echoServer accepts on 127.0.0.1 (or addr) and echoes; closed in Cleanup.
func echoServer(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln
}

func portOf(t *testing.T, ln net.Listener) uint16 {
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

// httpsAt serves h over TLS at addr (a test host's address, often port
// 443) until the test ends, and returns a pool trusting its certificate.
func httpsAt(t *testing.T, addr string, h http.Handler) *x509.CertPool {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return pool
}
