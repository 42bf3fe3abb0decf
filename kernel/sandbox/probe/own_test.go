package probe_test

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/netbroker"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
	"lnk.dev/lnk/kernel/sandbox/probe"
)

// noneOwn is a proxy's protection removed: it knows no own address.
type noneOwn struct{}

func (noneOwn) AnyOwn(...netip.Addr) (bool, error) { return false, nil }

// TestOwnAddressProbes, in a network namespace of the test's own whose
// interface holds a "public" address: the check listens on it, the
// direct probe finds it open here, outside a sandbox (the probe can
// tell); through a real proxy granting the whole internet the proxy
// probe finds it closed, and through the same proxy with its protection
// removed it finds it open and the check fails.
func TestOwnAddressProbes(t *testing.T) {
	if !testenv.InNetns(t) {
		return
	}
	if err := testenv.AddInterface("lnkown0"); err != nil {
		t.Fatal(err)
	}
	if err := testenv.AddAddr("lnkown0", netip.MustParsePrefix("198.51.100.5/24")); err != nil {
		t.Fatal(err)
	}
	o, err := probe.Listen()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if !strings.HasPrefix(o.OwnAddr, "198.51.100.5:") {
		t.Fatalf("the check listens on %q, not this machine's own address", o.OwnAddr)
	}
	probesWith := func(own netbroker.OwnSet, grants caps.Compiled) []probe.Result {
		t.Helper()
		rules, err := netbroker.RulesFrom(sandbox.NetGrants(&grants))
		if err != nil {
			t.Fatal(err)
		}
		p, err := netbroker.New(netbroker.Config{Rules: rules, Own: own, Log: func(netbroker.Event) {}})
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go p.Serve(ln)
		defer p.Close()
		h := o.Host
		h.RelayPort = ln.Addr().(*net.TCPAddr).Port
		var tried []probe.Probe
		for _, pr := range probe.List(&caps.Compiled{Home: t.TempDir()}, h).Probes {
			if strings.Contains(pr.Name, "own address") {
				tried = append(tried, pr)
			}
		}
		if len(tried) != 2 {
			t.Fatalf("own-address probes: %+v", tried)
		}
		return probe.Run(probe.Spec{Probes: tried})
	}
	// The grants: none, and the very port on the own address.
	none, port := caps.Compiled{}, caps.Compiled{Internet: caps.Internet{On: true, TCP: []string{o.OwnAddr}}}
	for _, g := range []caps.Compiled{none, port} {
		rs := probesWith(nil, g) // nil: the proxy lists this namespace's addresses itself
		for _, r := range rs {
			want := probe.Closed
			if r.Kind == "tcp" {
				want = probe.Open // outside a sandbox the direct way is open
			}
			if r.Got != want {
				t.Errorf("%s: %s (%s), want %s", r.Name, r.Got, r.Detail, want)
			}
		}
		if !strings.Contains(rs[1].Detail, "never reachable from a sandbox") {
			t.Errorf("the proxy's refusal: %q", rs[1].Detail)
		}
	}
	// Protection removed: with the port granted the proxy tunnels (open);
	// with no grant it refuses by its host rule alone (broken). Either
	// fails the check.
	for g, want := range map[*caps.Compiled]string{&port: probe.Open, &none: probe.Broken} {
		rs := probesWith(noneOwn{}, *g)
		if rs[1].Got != want || !probe.Failed(rs[1:]) {
			t.Errorf("with the protection removed: %s (%s), want %s; the check fails: %v", rs[1].Got, rs[1].Detail, want, probe.Failed(rs[1:]))
		}
	}
}
