package netbroker

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// The test's stand-in for this machine's public addresses: an
// interface in the test's own network namespace holds them.
const (
	ownDev   = "lnkown0"
	ownAddr4 = "198.51.100.5"
	ownAddr6 = "2001:db8:5::5"
	ownLater = "198.51.100.9" // added once the watch or proxy runs
)

func addOwnDev(t *testing.T) {
	t.Helper()
	if err := testenv.AddInterface(ownDev); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ownAddr4 + "/24", ownAddr6 + "/64"} {
		if err := testenv.AddAddr(ownDev, netip.MustParsePrefix(p)); err != nil {
			t.Fatal(err)
		}
	}
}

func addLater(t *testing.T, a string) {
	t.Helper()
	if err := testenv.AddAddr(ownDev, netip.MustParsePrefix(a+"/32")); err != nil {
		t.Fatal(err)
	}
}

// A proxy knowing the namespace's own addresses (New opens the watch) is
// asked for a service bound to 0.0.0.0 and :: at each of them, by every
// way in: CONNECT, absolute-form GET, SOCKS5, the global IPv6 address,
// the IPv4-mapped form, a name resolving to it, and an address added
// after the proxy started. Each is refused and logged with its reason,
// while a public host in another namespace (the control) is reached
// through the same proxy.
func TestProxyRefusesOwnAddresses(t *testing.T) {
	if !inNetns(t) {
		return
	}
	addOwnDev(t)
	var hits atomic.Int32
	httpServer(t, "0.0.0.0:80", func(w http.ResponseWriter, r *http.Request) { hits.Add(1); io.WriteString(w, "owner's service") })
	echoServer(t, "[::]:443") // a dual-stack socket: :: and 0.0.0.0 at once
	hostLn, err := hostNet("192.0.2.1", "192.0.2.2", 443)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := hostLn.Accept()
			if err != nil {
				return
			}
			io.Copy(c, c)
			c.Close()
		}
	}()
	t.Cleanup(func() { hostLn.Close() })

	tp := startProxy(t, Grants{Internet: InternetGrants{On: true}}, func(c *Config) {
		c.Own = nil // the real watch, opened by New
		c.Resolver = mapResolver{"own.example.test": addrs(ownAddr4), "host.example.test": addrs("192.0.2.2")}
		c.SOCKSSecret = socksSecret
	})
	if resp, _, _, _ := tp.ask(t, "CONNECT host.example.test:443 HTTP/1.1\r\n\r\n"); resp.StatusCode != 200 {
		t.Fatalf("the control, a public host in another namespace: %s", resp.Status)
	}
	addLater(t, ownLater)
	for _, req := range []string{
		"CONNECT " + ownAddr4 + ":443 HTTP/1.1\r\n\r\n",
		"GET http://" + ownAddr4 + "/ HTTP/1.1\r\nHost: " + ownAddr4 + "\r\n\r\n",
		"CONNECT [" + ownAddr6 + "]:443 HTTP/1.1\r\n\r\n",
		"CONNECT [::ffff:" + ownAddr4 + "]:443 HTTP/1.1\r\n\r\n",
		"CONNECT own.example.test:443 HTTP/1.1\r\n\r\n",
		"GET http://own.example.test/ HTTP/1.1\r\nHost: own.example.test\r\n\r\n",
		"CONNECT " + ownLater + ":443 HTTP/1.1\r\n\r\n",
	} {
		resp, body, _, _ := tp.ask(t, req)
		if resp.StatusCode != 403 || !strings.Contains(body, "address of this machine's own: never reachable from a sandbox") {
			t.Errorf("%q: %s %q", firstLine(req), resp.Status, body)
		}
	}
	for _, target := range []netip.Addr{netip.MustParseAddr(ownAddr4), netip.MustParseAddr(ownAddr6)} {
		c, _ := socksHandshake(t, tp, []byte{2}, "lnk", socksSecret)
		typ := byte(1)
		if target.Is6() {
			typ = 4
		}
		req := append(append([]byte{5, 1, 0, typ}, target.AsSlice()...), 443>>8, 443&0xff)
		if code := socksAsk(t, c, req); code != socksNotAllowed {
			t.Errorf("SOCKS5 to %s: reply %#x", target, code)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the owner's service was reached %d times", hits.Load())
	}
	refused := 0
	for _, e := range tp.log.all() {
		if e.Decision == "refuse" && e.Rule == KindAddress && strings.Contains(e.Reason, "address of this machine's own") {
			refused++
		}
	}
	if refused != 9 {
		t.Fatalf("%d refusals of an own address logged, want 9: %+v", refused, tp.log.all())
	}
	// With no grant at all, an own address is refused as such (no hint:
	// no grant would allow it), not as a host the grants lack.
	bare := startProxy(t, Grants{}, func(c *Config) { c.Own = nil })
	resp, body, _, _ := bare.ask(t, "CONNECT "+ownAddr4+":443 HTTP/1.1\r\n\r\n")
	if resp.StatusCode != 403 || resp.Header.Get("X-Lnk-Refused") != KindAddress || !strings.Contains(body, "never reachable") || strings.Contains(body, "hint:") {
		t.Errorf("no grants: %s %q", resp.Status, body)
	}
	// The service is there: dialled directly, not through the proxy, it answers.
	c, err := net.Dial("tcp", ownAddr4+":443")
	if err != nil {
		t.Fatalf("the service on 0.0.0.0 is not reachable directly: %v", err)
	}
	c.Close()
}
