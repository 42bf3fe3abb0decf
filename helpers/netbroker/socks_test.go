package netbroker

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

const socksSecret = "s0cks-secret-0123456789abcdef"

func socksDomainReq(cmd byte, host string, port uint16) []byte {
	b := []byte{5, cmd, 0, socksDomain, byte(len(host))}
	b = append(b, host...)
	return append(b, byte(port>>8), byte(port))
}

func TestReadSOCKSRequest(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       []byte
		host     string
		port     uint16
		code     byte // 0: parsed
		wantKind string
	}{
		{"ipv4", []byte{5, 1, 0, 1, 127, 0, 0, 1, 0x1f, 0x90}, "127.0.0.1", 8080, 0, ""},
		{"ipv6", append([]byte{5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 0, 80), "::1", 80, 0, ""},
		{"domain", socksDomainReq(1, "Example.COM.", 443), "example.com", 443, 0, ""},
		{"domain spelled as hex ipv4", socksDomainReq(1, "0x7f.1", 80), "127.0.0.1", 80, 0, ""},
		{"domain spelled as decimal ipv4", socksDomainReq(1, "2130706433", 80), "127.0.0.1", 80, 0, ""},
		{"mapped ipv6 stays as sent", append([]byte{5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 169, 254, 169, 254}, 0, 80), "::ffff:169.254.169.254", 80, 0, ""},
		{"bind", socksDomainReq(socksBind, "example.com", 80), "", 0, socksCmdUnsupported, KindMalformed},
		{"udp associate", socksDomainReq(socksAssociate, "example.com", 80), "", 0, socksCmdUnsupported, KindMalformed},
		{"unknown command", socksDomainReq(9, "example.com", 80), "", 0, socksCmdUnsupported, KindMalformed},
		{"unknown address type", []byte{5, 1, 0, 2, 1, 2, 3, 4, 0, 80}, "", 0, socksAddrUnsupported, KindMalformed},
		{"reserved byte", []byte{5, 1, 1, 1, 127, 0, 0, 1, 0, 80}, "", 0, socksGeneralFailure, KindMalformed},
		{"version 4", []byte{4, 1, 0, 80, 127, 0, 0, 1, 0}, "", 0, socksGeneralFailure, KindMalformed},
		{"port 0", []byte{5, 1, 0, 1, 127, 0, 0, 1, 0, 0}, "", 0, socksGeneralFailure, KindMalformed},
		{"empty domain", []byte{5, 1, 0, 3, 0, 0, 80}, "", 0, socksGeneralFailure, KindMalformed},
		{"nul in domain", socksDomainReq(1, "example.com\x00.evil", 80), "", 0, socksGeneralFailure, KindMalformed},
		{"userinfo in domain", socksDomainReq(1, "user@example.com", 80), "", 0, socksGeneralFailure, KindUserinfo},
		{"unicode domain", socksDomainReq(1, "exämple.com", 80), "", 0, socksGeneralFailure, KindMalformed},
		{"zone in domain", socksDomainReq(1, "fe80::1%eth0", 80), "", 0, socksGeneralFailure, KindMalformed},
		{"overflowing ipv4", socksDomainReq(1, "256.0.0.1", 80), "", 0, socksGeneralFailure, KindMalformed},
		{"cut short", []byte{5, 1, 0, 1, 127, 0}, "", 0, socksGeneralFailure, KindMalformed},
		{"domain cut short", []byte{5, 1, 0, 3, 10, 'a', 'b'}, "", 0, socksGeneralFailure, KindMalformed},
		{"empty", nil, "", 0, socksGeneralFailure, KindMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := readSOCKSRequest(bytes.NewReader(tc.in))
			if tc.code == 0 {
				if err != nil || req.Host.String() != tc.host || req.Port != tc.port {
					t.Fatalf("got %v:%d, %v; want %s:%d", req.Host, req.Port, err, tc.host, tc.port)
				}
				return
			}
			var se *socksError
			if !errors.As(err, &se) || se.code != tc.code || se.ref.Rule != tc.wantKind {
				t.Fatalf("got %#v, want code %#x kind %s", err, tc.code, tc.wantKind)
			}
		})
	}
}

func TestReadGreetingAndUserPass(t *testing.T) {
	for _, tc := range []struct {
		in   []byte
		ok   bool
		fail bool
	}{
		{[]byte{5, 1, 2}, true, false},
		{[]byte{5, 2, 0, 2}, true, false},
		{[]byte{5, 1, 0}, false, false},
		{[]byte{5, 0}, false, true},
		{[]byte{5, 3, 0, 1}, false, true},
		{[]byte{4, 1, 2}, false, true},
	} {
		ok, err := readGreeting(bytes.NewReader(tc.in))
		if ok != tc.ok || (err != nil) != tc.fail {
			t.Errorf("greeting %v: %v %v", tc.in, ok, err)
		}
	}
	up := func(user, pass string) []byte {
		b := append([]byte{1, byte(len(user))}, user...)
		return append(append(b, byte(len(pass))), pass...)
	}
	for _, tc := range []struct {
		name   string
		in     []byte
		secret string
		ok     bool
		fail   bool
	}{
		{"right", up("lnk", socksSecret), socksSecret, true, false},
		{"wrong secret", up("lnk", socksSecret[:len(socksSecret)-1]+"x"), socksSecret, false, false},
		{"a prefix of the secret", up("lnk", socksSecret[:5]), socksSecret, false, false},
		{"wrong user", up("root", socksSecret), socksSecret, false, false},
		{"no secret on the proxy", up("lnk", "x"), "", false, false},
		{"empty password", up("lnk", ""), socksSecret, false, true},
		{"version 5", append([]byte{5}, up("lnk", socksSecret)[1:]...), socksSecret, false, true},
		{"cut short", up("lnk", socksSecret)[:8], socksSecret, false, true},
	} {
		ok, err := readUserPass(bytes.NewReader(tc.in), tc.secret)
		if ok != tc.ok || (err != nil) != tc.fail {
			t.Errorf("%s: %v %v", tc.name, ok, err)
		}
	}
}

// socksClient runs the greeting and authentication and returns the
// connection, ready for a request, or the bytes the proxy answered.
func socksHandshake(t *testing.T, tp *testProxy, methods []byte, user, pass string) (net.Conn, []byte) {
	t.Helper()
	c := tp.dial(t)
	c.Write(append([]byte{5, byte(len(methods))}, methods...))
	sel := make([]byte, 2)
	if _, err := io.ReadFull(c, sel); err != nil {
		t.Fatalf("no method selection: %v", err)
	}
	if sel[1] != socksUserPass {
		return nil, sel
	}
	b := append([]byte{1, byte(len(user))}, user...)
	c.Write(append(append(b, byte(len(pass))), pass...))
	st := make([]byte, 2)
	if _, err := io.ReadFull(c, st); err != nil {
		t.Fatalf("no authentication status: %v", err)
	}
	if st[1] != 0 {
		return nil, st
	}
	return c, nil
}

// socksAsk asks for host:port and returns the reply's code.
func socksAsk(t *testing.T, c net.Conn, req []byte) byte {
	t.Helper()
	c.Write(req)
	rep := make([]byte, 10)
	if _, err := io.ReadFull(c, rep); err != nil {
		t.Fatalf("no reply to %v: %v", req, err)
	}
	return rep[1]
}

// A SOCKS5 client on the proxy's socket: authenticated with the secret
// it reaches a granted port and its bytes pass both ways; without the
// secret, or offering no authentication, it is refused and logged.
func TestSOCKSConnect(t *testing.T) {
	echo := echoServer(t, "127.0.0.1:0")
	port := portOf(t, echo)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{port}}, func(c *Config) { c.SOCKSSecret = socksSecret })

	c, _ := socksHandshake(t, tp, []byte{0, 2}, "lnk", socksSecret)
	if c == nil {
		t.Fatal("refused with the right secret")
	}
	if code := socksAsk(t, c, socksDomainReq(1, "localhost", port)); code != socksOK {
		t.Fatalf("granted port: reply %#x", code)
	}
	io.WriteString(c, "ping")
	c.(interface{ CloseWrite() error }).CloseWrite()
	if got, err := io.ReadAll(c); err != nil || string(got) != "ping" {
		t.Fatalf("through the tunnel: %q %v", got, err)
	}
	ev := tp.log.waitFor(t, func(e Event) bool { return e.Decision == "allow" })
	if ev.Kind != "socks" || ev.Host != "localhost" || ev.Port != port || ev.Up != 4 || ev.Down != 4 || ev.Addr != fmt.Sprintf("127.0.0.1:%d", port) {
		t.Fatalf("logged %+v", ev)
	}

	if _, sel := socksHandshake(t, tp, []byte{0}, "", ""); !bytes.Equal(sel, []byte{5, 0xff}) {
		t.Fatalf("no authentication offered: %v", sel)
	}
	if _, st := socksHandshake(t, tp, []byte{2}, "lnk", "wrong"); !bytes.Equal(st, []byte{1, 1}) {
		t.Fatalf("wrong secret: %v", st)
	}
	for _, reason := range []string{"only username/password", "wrong username or secret"} {
		ev := tp.log.waitFor(t, func(e Event) bool { return strings.Contains(e.Reason, reason) })
		if ev.Kind != "socks" || ev.Decision != "refuse" || ev.Rule != KindAuth || ev.Status != 407 {
			t.Fatalf("logged %+v", ev)
		}
	}
	for name, cmd := range map[string]byte{"bind": socksBind, "udp associate": socksAssociate} {
		c, _ := socksHandshake(t, tp, []byte{2}, "lnk", socksSecret)
		if code := socksAsk(t, c, socksDomainReq(cmd, "localhost", port)); code != socksCmdUnsupported {
			t.Fatalf("%s: reply %#x", name, code)
		}
	}
}

// A proxy with no secret takes no SOCKS5 client at all.
func TestSOCKSWithoutSecretRefused(t *testing.T) {
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{1}}, nil)
	if _, sel := socksHandshake(t, tp, []byte{2}, "lnk", ""); !bytes.Equal(sel, []byte{5, 0xff}) {
		t.Fatalf("got %v", sel)
	}
	tp.log.waitFor(t, func(e Event) bool { return e.Rule == KindAuth && strings.Contains(e.Reason, "no secret") })
}

// Every target a SOCKS5 client names is judged exactly as the same
// CONNECT: the same rule, reason and status in the log, one line each.
func TestSOCKSSameRulesAsConnect(t *testing.T) {
	echo := echoServer(t, "127.0.0.1:0")
	port := portOf(t, echo)
	grants := Grants{LocalhostPorts: []uint16{port}, Internet: InternetGrants{On: true, Hosts: []string{"example.com"}}}
	resolver := mapResolver{"example.com": addrs("93.184.216.34", "10.0.0.1"), "meta.test": addrs("169.254.169.254")}
	for _, tc := range []struct {
		host string
		port uint16
		code byte
	}{
		{"127.0.0.1", port + 1, socksNotAllowed},
		{"169.254.169.254", 80, socksNotAllowed},
		{"0xa9.0xfe.0xa9.0xfe", 80, socksNotAllowed},
		{"::ffff:169.254.169.254", 80, socksNotAllowed},
		{"64:ff9b::a9fe:a9fe", 80, socksNotAllowed},
		{"example.com", 443, socksNotAllowed}, // one private answer refuses the name
		{"evil-example.com", 443, socksNotAllowed},
		{"meta.test", 443, socksNotAllowed},
		{"10.0.0.1", 22, socksNotAllowed},
	} {
		t.Run(tc.host, func(t *testing.T) {
			edit := func(c *Config) { c.SOCKSSecret = socksSecret; c.Resolver = resolver }
			viaConnect := startProxy(t, grants, edit)
			h := tc.host
			if strings.Contains(h, ":") {
				h = "[" + h + "]"
			}
			resp, _, _, _ := viaConnect.ask(t, fmt.Sprintf("CONNECT %s:%d HTTP/1.1\r\n\r\n", h, tc.port))
			want := viaConnect.log.waitFor(t, func(e Event) bool { return e.Decision == "refuse" })

			viaSOCKS := startProxy(t, grants, edit)
			c, _ := socksHandshake(t, viaSOCKS, []byte{2}, "lnk", socksSecret)
			if code := socksAsk(t, c, socksDomainReq(1, tc.host, tc.port)); code != tc.code {
				t.Fatalf("reply %#x, want %#x", code, tc.code)
			}
			got := viaSOCKS.log.waitFor(t, func(e Event) bool { return e.Decision == "refuse" })
			if got.Rule != want.Rule || got.Reason != want.Reason || got.Status != resp.StatusCode || got.Host != want.Host {
				t.Fatalf("socks logged %+v\nconnect logged %+v", got, want)
			}
			if n := len(viaSOCKS.log.all()); n != 1 {
				t.Fatalf("logged %d times", n)
			}
		})
	}
}

// SOCKS5 shares CONNECT's limits: a local model's port is never
// tunnelled, and [internet] per_minute counts SOCKS5 tunnels too.
func TestSOCKSLocalModelAndRate(t *testing.T) {
	echo := echoServer(t, "127.0.0.1:0")
	port := portOf(t, echo)
	model := echoServer(t, "127.0.0.1:0")
	modelPort := portOf(t, model)
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{port, modelPort}, Internet: InternetGrants{PerMinute: 1}}, func(c *Config) {
		c.SOCKSSecret = socksSecret
		c.LocalModelPorts = []uint16{modelPort}
		frozen := time.Now()
		c.Now = func() time.Time { return frozen }
	})
	c, _ := socksHandshake(t, tp, []byte{2}, "lnk", socksSecret)
	if code := socksAsk(t, c, socksDomainReq(1, "127.0.0.1", modelPort)); code != socksNotAllowed {
		t.Fatalf("a local model's port: reply %#x", code)
	}
	tp.log.waitFor(t, func(e Event) bool { return e.Kind == "socks" && e.Rule == KindRoute && e.Port == modelPort })
	for i, want := range []byte{socksOK, socksNotAllowed} {
		c, _ := socksHandshake(t, tp, []byte{2}, "lnk", socksSecret)
		if code := socksAsk(t, c, socksDomainReq(1, "127.0.0.1", port)); code != want {
			t.Fatalf("tunnel %d: reply %#x, want %#x", i+1, code, want)
		}
		c.Close()
	}
	tp.log.waitFor(t, func(e Event) bool { return e.Kind == "socks" && e.Rule == KindRate && e.Status == 429 })
}
