package netbroker

import (
	"errors"
	"net/netip"
	"testing"
)

// The proxy's ParseHost is netclass's, its refusals 400s: userinfo as
// its own kind, the rest as malformed; a host that reads is the control.
func TestParseHostRefusal(t *testing.T) {
	for s, kind := range map[string]string{"user@example.com": KindUserinfo, "exa\x00mple.com": KindMalformed, "256.0.0.1": KindMalformed} {
		_, err := ParseHost(s)
		var r *Refusal
		if !errors.As(err, &r) || r.Status != 400 || r.Rule != kind {
			t.Errorf("ParseHost(%q): %v, want a 400 %s refusal", s, err, kind)
		}
	}
	if h, err := ParseHost("0x7f.1"); err != nil || h.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("ParseHost(0x7f.1) = %v, %v", h, err)
	}
}

func TestWildcards(t *testing.T) {
	p, err := ParsePattern("*.example.com")
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"api.example.com":     true,
		"a.b.example.com":     true,
		"API.Example.Com.":    true,
		"example.com":         false,
		"evil-example.com":    false,
		"example.com.evil.io": false,
		"xexample.com":        false,
		"example.co":          false,
	} {
		h, err := ParseHost(host)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Match(h); got != want {
			t.Errorf("*.example.com matches %q = %v, want %v", host, got, want)
		}
	}
	for _, bad := range []string{"*", "*.com", "*.", "a.*.com", "*example.com", "**.example.com", "*.*.example.com", "*.1.2.3.4"} {
		if _, err := ParsePattern(bad); err == nil {
			t.Errorf("ParsePattern(%q) was accepted", bad)
		}
	}
	exact, _ := ParsePattern("example.com")
	sub, _ := ParseHost("api.example.com")
	if exact.Match(sub) {
		t.Error("exact example.com matched api.example.com")
	}
}

func TestParseTarget(t *testing.T) {
	good := []struct {
		method, uri string
		kind        TargetKind
		host        string
		port        uint16
		path        string
	}{
		{"CONNECT", "example.com:443", Tunnel, "example.com", 443, ""},
		{"CONNECT", "[2001:db8::1]:443", Tunnel, "2001:db8::1", 443, ""},
		{"GET", "http://example.com/a?b=c", Forward, "example.com", 80, "/a?b=c"},
		{"GET", "HTTP://example.com:8080", Forward, "example.com", 8080, "/"},
		{"GET", "http://example.com?q", Forward, "example.com", 80, "/?q"},
		{"POST", "/_link/s/abc/mcp/x", Route, "", 0, "/_link/s/abc/mcp/x"},
		// The sandbox's own 127.0.0.1 sent through HTTP_PROXY: the route.
		{"POST", "http://127.0.0.1:3128/_link/s/abc/mcp/x", Route, "", 0, "/_link/s/abc/mcp/x"},
		{"POST", "http://localhost:3128/_link/s/abc/sealed/K/v1", Route, "", 0, "/_link/s/abc/sealed/K/v1"},
		{"POST", "http://[::1]:3128/_link/s/abc/mcp/x", Route, "", 0, "/_link/s/abc/mcp/x"},
		{"GET", "http://example.com/_link/x", Forward, "example.com", 80, "/_link/x"},
	}
	for _, g := range good {
		tg, err := ParseTarget(g.method, g.uri)
		if err != nil {
			t.Errorf("%s %s: %v", g.method, g.uri, err)
			continue
		}
		if tg.Kind != g.kind || tg.Port != g.port || tg.Path != g.path || (g.host != "" && tg.Host.String() != g.host) {
			t.Errorf("%s %s = %+v", g.method, g.uri, tg)
		}
	}
	for _, b := range [][2]string{
		{"CONNECT", "example.com"}, {"CONNECT", "example.com:0"}, {"CONNECT", "example.com:65536"},
		{"CONNECT", "example.com:+443"}, {"CONNECT", "example.com:0443"}, {"CONNECT", "u:p@example.com:443"},
		{"CONNECT", "http://example.com:443"}, {"CONNECT", "::1:443"}, {"GET", "http://user@example.com/"},
		{"GET", "http://u:p@example.com:80/"}, {"GET", "https://example.com/"}, {"GET", "ftp://example.com/"},
		{"GET", "/index.html"}, {"GET", "example.com/"}, {"GET", "http://example.com/#frag"},
		{"GET", "/_link/../etc"}, {"GET", "/_link/a/../../x"}, {"GET", "http://exa%6dple.com/"},
		{"GET", "http://[::1/"}, {"GET", "http://example.com:80:80/"},
		{"GET", "http://127.0.0.1:3128/_link/a/../../x"},
	} {
		if tg, err := ParseTarget(b[0], b[1]); err == nil {
			t.Errorf("%s %s = %+v, want a refusal", b[0], b[1], tg)
		}
	}
}
