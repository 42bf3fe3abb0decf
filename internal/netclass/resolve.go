package netclass

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Resolver looks names up; *net.Resolver is one. Tests give one of
// their own that maps test names to loopback or namespace addresses, so
// nothing is ever looked up off the machine.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// IsLocalhostName reports names that mean this machine whatever any DNS
// answers (RFC 6761): "localhost" and every name under ".localhost".
func IsLocalhostName(h Host) bool {
	return !h.IsAddr() && (h.Name == "localhost" || strings.HasSuffix(h.Name, ".localhost"))
}

// UnresolvedError is a name that gave no address: its lookup failed
// (Err) or answered nothing (Err nil).
type UnresolvedError struct {
	Host Host
	Err  error
}

func (e *UnresolvedError) Error() string {
	if e.Err == nil {
		return e.Host.String() + " does not resolve"
	}
	return fmt.Sprintf("%s does not resolve (%s)", e.Host, firstLine(e.Err.Error()))
}

func (e *UnresolvedError) Unwrap() error { return e.Err }

// UncheckedError is an answer [Judge] could not judge: this machine's
// own addresses cannot be known now.
type UncheckedError struct {
	Host Host
	Addr netip.Addr
	Err  error
}

func (e *UncheckedError) Error() string {
	return fmt.Sprintf("%s cannot be checked: %s", e.Host, firstLine(e.Err.Error()))
}

func (e *UncheckedError) Unwrap() error { return e.Err }

// Resolve is Link's one resolve-and-judge routine, which every user of
// the network's reach calls (the sandbox proxy, Link Web, a bucket's
// push and pull): h is looked up once (an address is itself; a
// localhost name is 127.0.0.1, never asked of any DNS), every answer is
// judged by [Judge] with own (which must know this machine's addresses:
// nil, or one that cannot answer, refuses), and allow decides each
// answer by its class. One answer refused, or one that cannot be
// judged, refuses the name whole. It returns the answers to dial, IPv4
// unmapped and zones dropped, in order: the caller dials only these,
// never looking the name up again (no DNS rebinding).
//
// Its errors are an [*UnresolvedError], an [*UncheckedError], or allow's
// own, returned as it is; a nil r is [net.DefaultResolver].
func Resolve(ctx context.Context, r Resolver, own OwnSet, h Host, allow func(a netip.Addr, cl Class) error) ([]netip.Addr, error) {
	var addrs []netip.Addr
	switch {
	case h.IsAddr():
		addrs = []netip.Addr{h.Addr}
	case IsLocalhostName(h):
		addrs = []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}
	default:
		if r == nil {
			r = net.DefaultResolver
		}
		var err error
		addrs, err = r.LookupNetIP(ctx, "ip", h.Name)
		if err != nil || len(addrs) == 0 {
			return nil, &UnresolvedError{Host: h, Err: err}
		}
	}
	if allow == nil {
		return nil, errors.New("netclass.Resolve: no rule to judge by")
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		cl, err := Judge(own, a)
		if err != nil {
			return nil, &UncheckedError{Host: h, Addr: a, Err: err}
		}
		if err := allow(a, cl); err != nil {
			return nil, err
		}
		out = append(out, a.Unmap().WithZone(""))
	}
	return out, nil
}

// WithPort is addrs each with port, for a dialer.
func WithPort(addrs []netip.Addr, port uint16) []netip.AddrPort {
	out := make([]netip.AddrPort, len(addrs))
	for i, a := range addrs {
		out[i] = netip.AddrPortFrom(a, port)
	}
	return out
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
