package netbroker

import (
	"context"
	"errors"
	"testing"
)

// TestLANEndpoint: a LAN endpoint (an owner's --private-host bucket's)
// lets its one host reach a private, CGNAT or link-local answer on its
// one port; another port of it, another host, its address itself, and
// an answer of loopback, this machine's own or metadata are refused.
// The same host as a plain tcp endpoint is refused its private answer
// (the control: the grant is what allows it).
func TestLANEndpoint(t *testing.T) {
	res := mapResolver{
		"nas.test":      addrs("192.168.77.7", "100.64.7.7", "169.254.7.7"),
		"loop.test":     addrs("192.168.77.7", "127.0.0.1"),
		"meta.test":     addrs("169.254.169.254"),
		"own.test":      addrs("203.0.113.77"),
		"neighbor.test": addrs("192.168.77.8"),
	}
	lan := func(hosts ...string) *Checker {
		r, err := RulesFrom(&Grants{AgentName: "a"})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range hosts {
			h, _ := ParseHost(s)
			r.AddLANEndpoint(h, 443)
		}
		return &Checker{Rules: r, Resolver: res, Own: ownList{addrs("203.0.113.77")[0]}}
	}
	check := func(c *Checker, host string, port uint16) error {
		h, err := ParseHost(host)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Check(context.Background(), h, port)
		return err
	}
	c := lan("nas.test", "loop.test", "meta.test", "own.test")
	if err := check(c, "nas.test", 443); err != nil {
		t.Fatalf("the LAN endpoint: %v", err)
	}
	for _, target := range []struct {
		host string
		port uint16
	}{{"nas.test", 444}, {"neighbor.test", 443}, {"192.168.77.7", 443}, {"loop.test", 443}, {"meta.test", 443}, {"own.test", 443}} {
		var r *Refusal
		if err := check(c, target.host, target.port); !errors.As(err, &r) || r.Status != 403 {
			t.Errorf("%s:%d: %v; want a 403", target.host, target.port, err)
		}
	}
	plain, err := RulesFrom(&Grants{AgentName: "a", Internet: InternetGrants{TCP: []string{"nas.test:443"}}})
	if err != nil {
		t.Fatal(err)
	}
	var r *Refusal
	if err := check(&Checker{Rules: plain, Resolver: res, Own: ownList{}}, "nas.test", 443); !errors.As(err, &r) || r.Class != Private {
		t.Fatalf("nas.test as a plain tcp endpoint: %v; want refused as private", err)
	}
}
