package netclass

import (
	"errors"
	"net/netip"
)

// Judge is [Classify], knowing this machine's own addresses: a, its
// IPv4-mapped form, and the IPv4 address any other IPv6 form carries
// (NAT64, 6to4, Teredo, …: a gateway would deliver it there) are each
// compared with them. Loopback, Metadata and Invalid are what they are
// whatever own says. An error (own is nil, or cannot know them now)
// refuses a: never "none is own".
func Judge(own OwnSet, a netip.Addr) (Class, error) {
	cl := Classify(a)
	if cl == Loopback || cl == Metadata || cl == Invalid {
		return cl, nil
	}
	if own == nil {
		return Invalid, errors.New("this machine's own addresses are not known")
	}
	forms := append([]netip.Addr{a.Unmap().WithZone("")}, Embedded4(a.WithZone(""))...)
	isOwn, err := own.AnyOwn(forms...)
	if err != nil {
		return Invalid, err
	}
	if isOwn {
		return Own, nil
	}
	return cl, nil
}
