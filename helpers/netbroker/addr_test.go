package netbroker

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestOwnAddressesAreNeverDialed(t *testing.T) {
	own := netip.MustParseAddr("203.0.113.77")
	c := &Checker{Own: ownList{own}}
	// The address, its mapped form, and the IPv6 forms a gateway would
	// deliver to it (NAT64, 6to4, IPv4-compatible).
	for _, a := range []string{"203.0.113.77", "::ffff:203.0.113.77", "64:ff9b::cb00:714d", "2002:cb00:714d::1", "::cb00:714d"} {
		if got, err := c.classify(netip.MustParseAddr(a)); err != nil || got != Own {
			t.Errorf("%s = %s, %v; want %s", a, got, err, Own)
		}
	}
	// A neighbour's address is judged by its class (the control).
	if got, err := c.classify(netip.MustParseAddr("203.0.113.78")); err != nil || got != Public {
		t.Errorf("203.0.113.78 = %s, %v; want %s", got, err, Public)
	}
	// No set at all refuses: never "none is own".
	if _, err := (&Checker{}).classify(netip.MustParseAddr("203.0.113.78")); err == nil {
		t.Error("a checker without an own set classified an address")
	}
}

// brokenOwn is a watch that cannot tell: its socket is gone.
type brokenOwn struct{}

func (brokenOwn) AnyOwn(...netip.Addr) (bool, error) {
	return false, errors.New("this machine's own addresses cannot be known now: the socket is closed")
}

// A proxy that cannot tell whether an address is its machine's own
// refuses it, and says why; a loopback port it was granted, which no
// own address can be, still passes (the control).
func TestOwnUnknownRefuses(t *testing.T) {
	rules, err := RulesFrom(&Grants{Internet: InternetGrants{On: true}, LocalhostPorts: []uint16{8080}})
	if err != nil {
		t.Fatal(err)
	}
	c := &Checker{Rules: rules, Resolver: mapResolver{"api.example.test": addrs("198.51.100.1")}, Own: brokenOwn{}}
	for _, h := range []string{"198.51.100.1", "api.example.test"} {
		host, _ := ParseHost(h)
		_, err := c.Check(context.Background(), host, 443)
		var r *Refusal
		if !errors.As(err, &r) || r.Status != 403 || r.Rule != KindAddress || !strings.Contains(r.Reason, h+" cannot be checked: this machine's own addresses cannot be known now") {
			t.Errorf("%s: %v", h, err)
		}
	}
	host, _ := ParseHost("127.0.0.1")
	if _, err := c.Check(context.Background(), host, 8080); err != nil {
		t.Errorf("a granted loopback port: %v", err)
	}
}
