package netbroker

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

// Resolver looks names up; *net.Resolver is one. Tests hand the proxy a
// resolver of their own that maps test names to loopback or namespace
// addresses, so nothing is ever looked up off the machine.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Checker turns a granted host into the addresses the proxy may dial:
// it resolves a name once, judges every answer, refuses the whole name if
// any answer is forbidden, and returns only checked addresses, so the
// dial never looks the name up again (no DNS rebinding).
type Checker struct {
	Rules    *Rules
	Resolver Resolver
	// Own are this machine's own addresses (see [OwnAddrs]): never dialed.
	Own map[netip.Addr]bool
}

// OwnAddrs lists this machine's interface addresses, loopback aside.
func OwnAddrs() map[netip.Addr]bool {
	own := map[netip.Addr]bool{}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return own
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && !p.Addr().IsLoopback() {
			own[p.Addr().WithZone("")] = true
		}
	}
	return own
}

// classify is Classify, knowing this machine's own addresses.
func (c *Checker) classify(a netip.Addr) Class {
	cl := Classify(a)
	if cl != Loopback && cl != Metadata && c.Own[a.Unmap().WithZone("")] {
		return Own
	}
	return cl
}

// Check decides h:port and returns the addresses to dial, in order.
func (c *Checker) Check(ctx context.Context, h Host, port uint16) ([]netip.AddrPort, error) {
	lan, err := c.Rules.allowHost(h, port)
	if err != nil {
		return nil, err
	}
	return c.resolve(ctx, h, port, func(cl Class) error { return c.Rules.allowAddr(h, port, cl, lan) })
}

// CheckPublic returns h's addresses if every one is public: for a
// sealed secret's own host, which its secret grants whatever [internet]
// says.
func (c *Checker) CheckPublic(ctx context.Context, h Host, port uint16) ([]netip.AddrPort, error) {
	if isLocalhostName(h) {
		return nil, c.Rules.refuseAddress(h, port, Loopback)
	}
	return c.resolve(ctx, h, port, func(cl Class) error {
		if cl != Public {
			return c.Rules.refuseAddress(h, port, cl)
		}
		return nil
	})
}

// resolve looks h up once (unless it is an address) and judges every
// answer; one refused answer refuses the name.
func (c *Checker) resolve(ctx context.Context, h Host, port uint16, judge func(Class) error) ([]netip.AddrPort, error) {
	var addrs []netip.Addr
	var err error
	switch {
	case h.IsAddr():
		addrs = []netip.Addr{h.Addr}
	case isLocalhostName(h):
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	default:
		addrs, err = c.Resolver.LookupNetIP(ctx, "ip", h.Name)
		if err != nil || len(addrs) == 0 {
			return nil, &Refusal{Status: 502, Kind: KindUpstream,
				Reason: fmt.Sprintf("%s does not resolve", h)}
		}
	}
	out := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		if err := judge(c.classify(a)); err != nil {
			return nil, err
		}
		out = append(out, netip.AddrPortFrom(a.Unmap().WithZone(""), port))
	}
	return out, nil
}
