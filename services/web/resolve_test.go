package web

import (
	"errors"
	"net/netip"
	"testing"
)

// The two ways Link Web's own copy of the resolve-and-judge routine was
// looser than the proxy's, before both became netclass.Resolve.

// TestLocalhostNameIsThisMachine: a name under .localhost means this
// machine whatever a DNS answers (RFC 6761), so it is refused as
// loopback and never looked up, even when a resolver answers it with a
// public address; the same answer for another name is fetched (the
// control). Link Web's old copy asked the resolver and fetched it.
func TestLocalhostNameIsThisMachine(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("app.localhost", publicHost)
	w.res.set("pub.test", publicHost)
	tool, _ := w.tool(Config{})
	refused(t, tool, "http://app.localhost/page", "app.localhost resolves to a loopback")
	if p := fetched(t, tool, "http://pub.test/page"); p.Status != 200 {
		t.Fatalf("pub.test: %+v", p)
	}
	if n := w.res.lookups["app.localhost"]; n != 0 {
		t.Fatalf("app.localhost was looked up %d times", n)
	}
	if n := w.hits.count(publicHost); n != 1 {
		t.Fatalf("the public host was reached %d times, want once (pub.test alone)", n)
	}
}

// unknownOwn is an own set that cannot tell now (its socket broken).
type unknownOwn struct{}

func (unknownOwn) AnyOwn(...netip.Addr) (bool, error) {
	return false, errors.New("this machine's own addresses cannot be known now")
}

// TestPrivateHostUncheckedRefuses: a --private-host host is fetched
// wherever it resolves, but an answer that cannot be judged (this
// machine's own addresses unknown) refuses it all the same: it might be
// this machine. With the own set known it is fetched (the control).
// Link Web's old copy skipped the judging for a private host.
func TestPrivateHostUncheckedRefuses(t *testing.T) {
	w := newWorld(t)
	if w == nil {
		return
	}
	w.res.set("intranet.test", "10.9.0.2")
	blind, err := New(Config{PrivateHosts: []string{"intranet.test"}, Resolver: w.res, Own: unknownOwn{}})
	if err != nil {
		t.Fatal(err)
	}
	refused(t, blind, "http://intranet.test/page", "intranet.test cannot be checked: this machine's own addresses cannot be known now")
	tool, _ := w.tool(Config{PrivateHosts: []string{"intranet.test"}})
	if p := fetched(t, tool, "http://intranet.test/page"); p.Status != 200 {
		t.Fatalf("intranet.test: %+v", p)
	}
	if n := w.hits.count("10.9.0.2"); n != 1 {
		t.Fatalf("10.9.0.2 reached %d times, want once", n)
	}
}
