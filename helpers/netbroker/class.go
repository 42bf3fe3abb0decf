package netbroker

import (
	"errors"
	"net/netip"

	"lnk.dev/lnk/internal/netclass"
	"lnk.dev/lnk/internal/refusal"
)

// The proxy's address rule is internal/netclass's, Link's one
// classifier (Link Web uses the same); these names keep the proxy's
// code and its callers reading as before.
type (
	Class    = netclass.Class
	Host     = netclass.Host
	OwnSet   = netclass.OwnSet
	OwnWatch = netclass.OwnWatch
)

const (
	Invalid     = netclass.Invalid
	Public      = netclass.Public
	Loopback    = netclass.Loopback
	Unspecified = netclass.Unspecified
	Private     = netclass.Private
	CGNAT       = netclass.CGNAT
	LinkLocal   = netclass.LinkLocal
	Multicast   = netclass.Multicast
	Broadcast   = netclass.Broadcast
	Reserved    = netclass.Reserved
	Metadata    = netclass.Metadata
	Own         = netclass.Own
)

// Classify is [netclass.Classify].
func Classify(a netip.Addr) Class { return netclass.Classify(a) }

// WatchOwnAddrs is [netclass.WatchOwnAddrs].
func WatchOwnAddrs() (*OwnWatch, error) { return netclass.WatchOwnAddrs() }

func malformed(reason string) *Refusal {
	return &Refusal{Status: 400, Refusal: refusal.Refusal{Rule: KindMalformed, Reason: reason}}
}

// ParseHost is [netclass.ParseHost], its refusal a 400: userinfo as
// KindUserinfo, the rest as KindMalformed.
func ParseHost(s string) (Host, error) {
	h, err := netclass.ParseHost(s)
	if err != nil {
		var he *netclass.HostError
		if errors.As(err, &he) && he.Userinfo {
			return Host{}, &Refusal{Status: 400, Refusal: refusal.Refusal{Rule: KindUserinfo, Reason: he.Reason}}
		}
		return Host{}, malformed(err.Error())
	}
	return h, nil
}
