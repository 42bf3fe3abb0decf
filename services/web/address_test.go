package web

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// Every address the proxy's suite refuses, in each spelling a URL can
// carry it: each refused before anything is sent, by the one rule.
var forbiddenLiterals = []struct{ host, class string }{
	{"127.0.0.1", "loopback"}, {"127.1", "loopback"}, {"127.0.1", "loopback"}, {"2130706433", "loopback"},
	{"0x7f000001", "loopback"}, {"0x7f.1", "loopback"}, {"017700000001", "loopback"}, {"0177.0.0.1", "loopback"},
	{"0x7F.0x0.0x0.0x1", "loopback"}, {"127.255.255.254", "loopback"}, {"[::1]", "loopback"},
	{"[0:0:0:0:0:0:0:1]", "loopback"}, {"[::ffff:127.0.0.1]", "loopback"}, {"[::ffff:7f00:1]", "loopback"},
	{"[::127.0.0.1]", "loopback"}, {"[::ffff:0:127.0.0.1]", "loopback"}, {"[64:ff9b::127.0.0.1]", "loopback"},
	{"[64:ff9b::7f00:1]", "loopback"}, {"[2002:7f00:1::]", "loopback"}, {"127.0.0.1.", "loopback"},
	{"0.0.0.0", "unspecified"}, {"0", "unspecified"}, {"[::]", "unspecified"},
	{"10.9.0.2", "private network"}, {"10.1", "private network"}, {"167772161", "private network"},
	{"012.0.0.1", "private network"}, {"172.16.9.2", "private network"}, {"0xac.0x10.0.1", "private network"},
	{"192.168.9.2", "private network"}, {"3232235777", "private network"}, {"[::ffff:192.168.1.1]", "private network"},
	{"[::ffff:c0a8:101]", "private network"}, {"[64:ff9b::10.0.0.1]", "private network"},
	{"[2002:c0a8:101::1]", "private network"}, {"[fd00::1]", "private network"}, {"[fec0::1]", "private network"},
	{"[2001:0:4136:e378:8000:63bf:f5ff:fffe]", "private network"}, // Teredo, client 10.0.0.1
	{"100.64.9.2", "carrier-grade NAT"}, {"[::ffff:100.64.0.1]", "carrier-grade NAT"},
	{"169.254.9.2", "link-local"}, {"[fe80::1]", "link-local"}, {"[::ffff:169.254.1.1]", "link-local"},
	{"224.0.0.1", "multicast"}, {"[ff02::1]", "multicast"}, {"255.255.255.255", "broadcast"},
	{"240.0.0.1", "reserved"}, {"198.18.9.2", "reserved"}, {"192.0.0.1", "reserved"}, {"[100::1]", "reserved"},
	{"169.254.169.254", "cloud metadata"}, {"2852039166", "cloud metadata"}, {"0xa9fea9fe", "cloud metadata"},
	{"0251.0376.0251.0376", "cloud metadata"}, {"169.254.43518", "cloud metadata"},
	{"[::ffff:169.254.169.254]", "cloud metadata"}, {"[64:ff9b::169.254.169.254]", "cloud metadata"},
	{"[64:ff9b:1:a9fe:a9:fe00::]", "cloud metadata"}, {"[2002:a9fe:a9fe::]", "cloud metadata"},
	{"168.63.129.16", "cloud metadata"}, {"100.100.100.200", "cloud metadata"}, {"[fd00:ec2::254]", "cloud metadata"},
	{ownAddr, "this machine's own"}, {"[::ffff:" + ownAddr + "]", "this machine's own"},
	{"[64:ff9b::cb00:7101]", "this machine's own"}, // NAT64 of 203.0.113.1
}

// TestFetchRefusesThisMachineAndItsNetworks: every forbidden address,
// written as the URL's host or answered for a name (alone, or among
// public answers, either order), and every redirect into one, is refused
// with its class named; no host of those classes, nor this machine's
// own service on 0.0.0.0, is reached. The controls: the public host, by
// address and by name, is fetched, the name looked up once.
func TestFetchRefusesThisMachineAndItsNetworks(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	tool, log := w.tool(Config{})
	for _, c := range forbiddenLiterals {
		refused(t, tool, "http://"+c.host+"/page", c.class)
	}
	i := 0
	name := func(addrs ...string) string {
		i++
		n := fmt.Sprintf("h%d.example.com", i) // the test server's certificate names *.example.com
		w.res.set(n, addrs...)
		return n
	}
	for a, cl := range classHosts {
		refused(t, tool, "http://"+name(a)+"/page", cl.String())
		refused(t, tool, "http://"+name(publicHost, a)+"/page", cl.String())
		refused(t, tool, "http://"+name(a, publicHost)+"/page", cl.String())
		refused(t, tool, "http://"+name("::ffff:"+a)+"/page", cl.String())
	}
	for _, a := range []string{"127.0.0.1", "::1", ownAddr, "64:ff9b::a09:2", "2002:a09:2::1", "::a09:2", "fe80::1"} {
		refused(t, tool, "http://"+name(publicHost, a)+"/page", "resolves to")
	}
	if n := w.hits.total(); n != 0 {
		t.Fatalf("%d requests reached a host before any public fetch: %v", n, w.hits.by)
	}
	// Redirect chains into each class, by address and by name: the
	// public host is reached, the redirect's target never.
	starts := 0
	for a, cl := range classHosts {
		for _, to := range []string{"http://" + a + "/page", "http://" + name(a) + "/page", "https://" + name(publicHost, a) + "/page"} {
			refused(t, tool, "http://"+publicHost+"/to?u="+url.QueryEscape(to), cl.String())
			starts++
		}
	}
	for _, to := range []string{"http://127.0.0.1/page", "http://[::ffff:169.254.169.254]/page", "http://" + ownAddr + "/page", "http://0x7f.1/page"} {
		refused(t, tool, "http://"+publicHost+"/to?u="+url.QueryEscape(to), "")
		starts++
	}
	if got := w.hits.count(publicHost); got != starts || w.hits.total() != starts {
		t.Fatalf("the public host saw %d requests, want %d, and nothing else any: %v", got, starts, w.hits.by)
	}
	// Each refusal is logged once, with its reason.
	if n := strings.Count(log.String(), "refused"); n != len(forbiddenLiterals)+4*len(classHosts)+7+starts {
		t.Errorf("%d refusals logged, want %d:\n%s", n, len(forbiddenLiterals)+4*len(classHosts)+7+starts, log.String())
	}
	// The controls.
	if p := fetched(t, tool, "http://"+publicHost+"/page"); p.Status != 200 || p.Title != "A test page" {
		t.Fatalf("the public host by address: %+v", p)
	}
	pub := name(publicHost)
	p := fetched(t, tool, "https://"+pub+"/page")
	if p.Status != 200 || !strings.Contains(p.Text, "Hello") || p.URL != "https://"+pub+"/page" {
		t.Fatalf("the public host by name: %+v", p)
	}
	if n := w.res.lookups[pub]; n != 1 {
		t.Fatalf("%s looked up %d times, want once: the dial must use the checked answer", pub, n)
	}
}

// TestPrivateHost: a host named by --private-host is fetched wherever
// it resolves, by name or by address; another private host is still
// refused (the control), and so is the same host without the flag.
func TestPrivateHost(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("intranet.test", "10.9.0.2")
	w.res.set("other.test", "192.168.9.2")
	bare, _ := w.tool(Config{})
	refused(t, bare, "http://intranet.test/page", "private network")
	tool, _ := w.tool(Config{PrivateHosts: []string{"Intranet.TEST", "0xa9fea9fe"}})
	if p := fetched(t, tool, "http://intranet.test/page"); p.Status != 200 || p.Title != "A test page" {
		t.Fatalf("intranet.test: %+v", p)
	}
	if p := fetched(t, tool, "http://169.254.169.254/page"); p.Status != 200 {
		t.Fatalf("169.254.169.254, named 0xa9fea9fe: %+v", p)
	}
	refused(t, tool, "http://other.test/page", "private network")
	refused(t, tool, "http://10.9.0.2/page", "private network") // the flag names the name, not its address
	if w.hits.count("10.9.0.2") != 1 || w.hits.count("169.254.169.254") != 1 || w.hits.count("192.168.9.2") != 0 {
		t.Fatalf("hits: %v", w.hits.by)
	}
	if _, err := New(Config{PrivateHosts: []string{"user@host"}}); err == nil {
		t.Fatal("a --private-host that is no host was taken")
	}
}

// TestIPv6Hosts: over IPv6 too, the public host is fetched by address
// and by name, and a ULA host is refused by address, by name and among
// public answers; the ULA host is never reached.
func TestIPv6Hosts(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("six.example.com", publicHost6)
	w.res.set("ula.example.com", "fd00:9::2")
	w.res.set("mixed.example.com", publicHost6, "fd00:9::2")
	tool, _ := w.tool(Config{})
	if p := fetched(t, tool, "http://["+publicHost6+"]/page"); p.Title != "A test page" {
		t.Fatalf("the public IPv6 host by address: %+v", p)
	}
	if p := fetched(t, tool, "https://six.example.com/page"); p.Title != "A test page" {
		t.Fatalf("the public IPv6 host by name: %+v", p)
	}
	refused(t, tool, "http://[fd00:9::2]/page", "private network")
	refused(t, tool, "http://ula.example.com/page", "private network")
	refused(t, tool, "http://mixed.example.com/page", "private network")
	refused(t, tool, "http://[2001:db8:9::1]/page", "this machine's own")
	if w.hits.count(publicHost6) != 2 || w.hits.count("fd00:9::2") != 0 || w.hits.count("2001:db8:9::1") != 0 {
		t.Fatalf("hits: %v", w.hits.by)
	}
}
