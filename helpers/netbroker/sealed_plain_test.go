package netbroker

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A sealed secret's host that answers plain http on 443 never gets the
// value: the proxy speaks TLS first (its first byte is a handshake
// record, 0x16), the handshake fails, and the sandbox gets a 502.
func TestSealedRouteNeverPlainHTTP(t *testing.T) {
	if !inNetns(t) {
		return
	}
	ln, err := net.Listen("tcp", publicAddr+":443")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var got []byte
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		b := make([]byte, 4096)
		n, _ := c.Read(b)
		mu.Lock()
		got = append(got, b[:n]...)
		mu.Unlock()
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	}()
	placeholder := NewPlaceholder("API_KEY")
	tp := startProxy(t, Grants{}, func(c *Config) {
		c.Resolver = mapResolver{"example.com": addrs(publicAddr)}
		c.Routes = &Sealed{AgentID: "a", RouteSecret: "route-secret", Placeholders: map[string]string{"API_KEY": placeholder},
			Source: keySource{realKey, "example.com"}, Log: c.Log,
			Checker: &Checker{Rules: c.Rules, Resolver: c.Resolver, Own: c.Own}}
	})
	resp, body, _, _ := tp.ask(t, fmt.Sprintf("GET /_link/s/route-secret/sealed/API_KEY/v1?k=%s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n", placeholder, placeholder))
	if resp.StatusCode != 502 || !strings.Contains(body, "did not answer over https") {
		t.Fatalf("a plain http host: %s %q", resp.Status, body)
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || got[0] != 0x16 || bytes.Contains(got, []byte(realKey)) {
		t.Fatalf("the host was sent %q", got)
	}
}

// A redirect from the secret's host toward another host is passed back
// to the sandbox, never followed: the other host gets no request at all.
func TestSealedRouteRedirectNotFollowed(t *testing.T) {
	if !inNetns(t) {
		return
	}
	var mu sync.Mutex
	hits := 0
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	}))
	t.Cleanup(other.Close)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", other.URL+"/steal?k="+r.Header.Get("Authorization"))
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	ln, err := net.Listen("tcp", publicAddr+":443")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	placeholder := NewPlaceholder("API_KEY")
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{portOf(t, other.Listener)}}, func(c *Config) {
		c.Resolver = mapResolver{"example.com": addrs(publicAddr)}
		c.Routes = &Sealed{AgentID: "a", RouteSecret: "route-secret", Placeholders: map[string]string{"API_KEY": placeholder},
			Source: keySource{realKey, "example.com"}, Log: c.Log, RootCAs: pool,
			Checker: &Checker{Rules: c.Rules, Resolver: c.Resolver, Own: c.Own}}
	})
	resp, _, _, _ := tp.ask(t, fmt.Sprintf("POST /_link/s/route-secret/sealed/API_KEY/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: %s\r\nContent-Length: 0\r\n\r\n", placeholder))
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 307 || strings.Contains(loc, realKey) || !strings.Contains(loc, placeholder) {
		t.Fatalf("redirect: %s, Location %q", resp.Status, loc)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 0 {
		t.Fatalf("the other host was asked %d times", hits)
	}
}
