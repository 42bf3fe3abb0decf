package netbroker

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestConnectToLoopbackRefusedWithoutGrant(t *testing.T) {
	echo := echoServer(t, "127.0.0.1:0")
	port := portOf(t, echo)
	tp := startProxy(t, Grants{Internet: InternetGrants{On: true}}, nil)
	resp, body, _, _ := tp.ask(t, fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: x\r\n\r\n", port))
	if resp.StatusCode != 403 || resp.Header.Get("X-Lnk-Refused") != KindAddress {
		t.Fatalf("got %s %q", resp.Status, body)
	}
	if want := fmt.Sprintf("lnk agent allow agent --port %d", port); !strings.Contains(body, want) {
		t.Fatalf("body %q does not name %q", body, want)
	}
	ev := tp.log.waitFor(t, func(e Event) bool { return e.Decision == "refuse" })
	if ev.Rule != KindAddress || ev.Port != port || ev.Status != 403 {
		t.Fatalf("logged %+v", ev)
	}
	if n := len(tp.log.all()); n != 1 {
		t.Fatalf("the refusal was logged %d times", n)
	}
}

func TestConnectToGrantedLocalhostPort(t *testing.T) {
	echo := echoServer(t, "127.0.0.1:0")
	port := portOf(t, echo)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{port}}, nil)
	for _, host := range []string{"127.0.0.1", "localhost", "[::ffff:127.0.0.1]"} {
		resp, _, c, br := tp.ask(t, fmt.Sprintf("CONNECT %s:%d HTTP/1.1\r\n\r\nearly ", host, port))
		if resp.StatusCode != 200 {
			t.Fatalf("CONNECT %s: %s", host, resp.Status)
		}
		io.WriteString(c, "bytes")
		c.(interface{ CloseWrite() error }).CloseWrite()
		got, err := io.ReadAll(br)
		if err != nil || string(got) != "early bytes" {
			t.Fatalf("through the tunnel to %s: %q, %v", host, got, err)
		}
	}
	ev := tp.log.waitFor(t, func(e Event) bool { return e.Decision == "allow" })
	if ev.Kind != "connect" || ev.Up != int64(len("early bytes")) || ev.Down != int64(len("early bytes")) {
		t.Fatalf("logged %+v", ev)
	}
}

func TestForwardToGrantedLocalhostPort(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s host=%s auth=%q", r.Method, r.URL.RequestURI(), r.Host, r.Header.Get("Proxy-Authorization"))
	}))
	t.Cleanup(srv.Close)
	port := portOf(t, srv.Listener)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{port}}, nil)
	resp, body, _, _ := tp.ask(t, fmt.Sprintf("GET http://127.0.0.1:%d/a/b?c=d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nProxy-Authorization: x\r\n\r\n", port, port))
	want := fmt.Sprintf("GET /a/b?c=d host=127.0.0.1:%d auth=\"\"", port)
	if resp.StatusCode != 200 || body != want {
		t.Fatalf("got %s %q, want %q", resp.Status, body, want)
	}
	tp.log.waitFor(t, func(e Event) bool { return e.Decision == "allow" && e.Kind == "http" && e.Status == 200 })
}

// Each refusal: the status, the kind a caller tells it by, and words the
// client is told.
func TestRefusals(t *testing.T) {
	c := Grants{
		Internet: InternetGrants{On: true, Hosts: []string{"api.example.test", "*.mixed.test", "meta.test"}},
	}
	tp := startProxy(t, c, func(cfg *Config) {
		cfg.Resolver = mapResolver{
			"api.example.test": addrs("203.0.113.10"),
			"a.mixed.test":     addrs("203.0.113.10", "10.0.0.5"),
			"meta.test":        addrs("169.254.169.254"),
			"v6.mixed.test":    addrs("2001:db8::1", "::ffff:127.0.0.1"),
		}
	})
	cases := []struct {
		name, req string
		status    int
		kind      string
		says      string
	}{
		{"not granted", "CONNECT other.test:443 HTTP/1.1\r\n\r\n", 403, KindHost, "lnk agent allow agent --internet-host other.test"},
		{"look-alike", "CONNECT evil-example.test:443 HTTP/1.1\r\n\r\n", 403, KindHost, "not in this sandbox's [internet] hosts"},
		{"port", "CONNECT api.example.test:22 HTTP/1.1\r\n\r\n", 403, KindPort, "lnk agent allow agent --tcp api.example.test:22"},
		{"mixed answers", "CONNECT a.mixed.test:443 HTTP/1.1\r\n\r\n", 403, KindAddress, "private network address"},
		{"mixed v6 answers", "CONNECT v6.mixed.test:443 HTTP/1.1\r\n\r\n", 403, KindAddress, "loopback"},
		{"metadata name", "GET http://meta.test/latest/meta-data/ HTTP/1.1\r\nHost: meta.test\r\n\r\n", 403, KindAddress, "never reachable"},
		{"metadata literal", "CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n", 403, KindAddress, "cloud metadata"},
		{"metadata decimal", "GET http://2852039166/ HTTP/1.1\r\n\r\n", 403, KindAddress, "cloud metadata"},
		{"metadata mapped", "CONNECT [::ffff:a9fe:a9fe]:443 HTTP/1.1\r\n\r\n", 403, KindAddress, "cloud metadata"},
		{"private literal", "CONNECT 0xa.1:443 HTTP/1.1\r\n\r\n", 403, KindAddress, "lnk agent allow agent --lan-host 10.0.0.1"},
		{"userinfo", "GET http://user:pw@api.example.test/ HTTP/1.1\r\nHost: api.example.test\r\n\r\n", 400, KindUserinfo, "userinfo"},
		{"host mismatch", "GET http://api.example.test/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n", 400, KindMismatch, "another host"},
		{"two hosts", "GET http://api.example.test/ HTTP/1.1\r\nHost: api.example.test\r\nHost: evil.test\r\n\r\n", 400, "", ""},
		{"https absolute", "GET https://api.example.test/ HTTP/1.1\r\nHost: api.example.test\r\n\r\n", 400, KindMalformed, "CONNECT"},
		{"origin form", "GET / HTTP/1.1\r\nHost: api.example.test\r\n\r\n", 400, KindMalformed, "this is a proxy"},
		{"garbage", "HELLO\r\n\r\n", 400, KindMalformed, "malformed request"},
		{"nul in host", "CONNECT api.example.test\x00.evil:443 HTTP/1.1\r\n\r\n", 400, KindMalformed, ""},
		{"no route", "GET /_link/s/x/sealed/y HTTP/1.1\r\nHost: p\r\n\r\n", 404, KindRoute, "no route"},
		{"no tool bridge", "POST /_link/s/x/mcp/y HTTP/1.1\r\nHost: p\r\n\r\n", 404, KindRoute, "no tool bridge"},
		{"huge header", "GET http://api.example.test/ HTTP/1.1\r\nX: " + strings.Repeat("a", 40<<10) + "\r\n\r\n", 431, KindTooLarge, "over"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body, _, _ := tp.ask(t, c.req)
			if resp.StatusCode != c.status {
				t.Fatalf("got %s %q, want %d", resp.Status, body, c.status)
			}
			if c.kind != "" && resp.Header.Get("X-Lnk-Refused") != c.kind {
				t.Fatalf("refused as %q, want %q (%s)", resp.Header.Get("X-Lnk-Refused"), c.kind, body)
			}
			if !strings.Contains(body, c.says) {
				t.Fatalf("body %q does not say %q", body, c.says)
			}
		})
	}
}
