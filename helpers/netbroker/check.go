package netbroker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"lnk.dev/lnk/internal/netclass"
	"lnk.dev/lnk/internal/refusal"
)

// Resolver looks names up: [netclass.Resolver]. Tests hand the proxy a
// resolver of their own that maps test names to loopback or namespace
// addresses, so nothing is ever looked up off the machine.
type Resolver = netclass.Resolver

// Checker turns a granted host into the addresses the proxy may dial:
// it resolves a name once, judges every answer, refuses the whole name if
// any answer is forbidden, and returns only checked addresses, so the
// dial never looks the name up again (no DNS rebinding).
type Checker struct {
	Rules    *Rules
	Resolver Resolver
	// Own knows this machine's own addresses ([OwnWatch]): never dialed.
	// Nil, or one that cannot answer, refuses every address.
	Own OwnSet
}

// classify is netclass.Judge with the proxy's own set.
func (c *Checker) classify(a netip.Addr) (Class, error) { return netclass.Judge(c.Own, a) }

// Check decides h:port and returns the addresses to dial, in order.
//
// An address of this machine's own is refused as such before the grants
// are read: no grant allows it, so no hint may suggest one.
func (c *Checker) Check(ctx context.Context, h Host, port uint16) ([]netip.AddrPort, error) {
	if h.IsAddr() {
		if _, err := c.resolve(ctx, h, port, func(cl Class) error {
			if cl == Own {
				return c.Rules.refuseAddress(h, port, cl)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
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

// resolve is [netclass.Resolve] (Link's one resolve-and-judge
// routine) with the proxy's own set, its errors as the proxy's
// refusals: a name that does not resolve is a 502, an answer that
// cannot be judged a 403.
func (c *Checker) resolve(ctx context.Context, h Host, port uint16, judge func(Class) error) ([]netip.AddrPort, error) {
	addrs, err := netclass.Resolve(ctx, c.Resolver, c.Own, h, func(_ netip.Addr, cl Class) error { return judge(cl) })
	var unresolved *netclass.UnresolvedError
	var unchecked *netclass.UncheckedError
	switch {
	case errors.As(err, &unresolved):
		return nil, &Refusal{Status: 502, Refusal: refusal.Refusal{Rule: KindUpstream, Reason: fmt.Sprintf("%s does not resolve", h)}}
	case errors.As(err, &unchecked):
		return nil, &Refusal{Status: 403, Class: Own, Refusal: refusal.Refusal{Rule: KindAddress, Reason: fmt.Sprintf("%s cannot be checked: %s", h, firstLine(unchecked.Err.Error()))}}
	case err != nil:
		return nil, err
	}
	return netclass.WithPort(addrs, port), nil
}
