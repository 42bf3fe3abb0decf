package netclass

import (
	"net/netip"
	"strings"
)

// Class is what an address is. The zero value is Invalid.
type Class int

// The address classes. What each may reach is its user's rule: the
// sandbox proxy refuses every class but Public unless [lan] or
// [localhost] grants it, and Metadata and Own always; Link Web fetches
// only Public.
const (
	Invalid     Class = iota
	Public            // global unicast, reachable with an [internet] grant
	Loopback          // 127.0.0.0/8, ::1: only a [localhost] port
	Unspecified       // 0.0.0.0/8, ::
	Private           // RFC 1918, ULA fc00::/7, site-local fec0::/10: [lan]
	CGNAT             // 100.64.0.0/10: [lan]
	LinkLocal         // 169.254.0.0/16, fe80::/10: [lan]
	Multicast         // 224.0.0.0/4, ff00::/8
	Broadcast         // 255.255.255.255
	Reserved          // 240.0.0.0/4, 198.18.0.0/15, 192.0.0.0/24, 192.88.99.0/24, non-2000::/3 IPv6
	Metadata          // cloud metadata services: never
	Own               // one of this machine's own addresses: never
)

var classNames = [...]string{
	Invalid:     "invalid address",
	Public:      "public address",
	Loopback:    "loopback address",
	Unspecified: "unspecified address",
	Private:     "private network address",
	CGNAT:       "carrier-grade NAT address",
	LinkLocal:   "link-local address",
	Multicast:   "multicast address",
	Broadcast:   "broadcast address",
	Reserved:    "reserved address",
	Metadata:    "cloud metadata address",
	Own:         "address of this machine's own",
}

// Article is the indefinite article that goes before the class's name.
func (c Class) Article() string {
	if strings.ContainsRune("aeiou", rune(c.String()[0])) {
		return "an"
	}
	return "a"
}

func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return "invalid address"
	}
	return classNames[c]
}

// metadata are the cloud metadata services' addresses (AWS, ECS, Azure,
// Alibaba, Oracle, AWS IPv6, GCP IPv6).
var metadata = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true,
	netip.MustParseAddr("169.254.170.2"):   true,
	netip.MustParseAddr("168.63.129.16"):   true,
	netip.MustParseAddr("100.100.100.200"): true,
	netip.MustParseAddr("192.0.0.192"):     true,
	netip.MustParseAddr("fd00:ec2::254"):   true,
	netip.MustParseAddr("fd20:ce::254"):    true,
}

type prefixClass struct {
	p netip.Prefix
	c Class
}

var v4Classes = []prefixClass{
	{netip.MustParsePrefix("0.0.0.0/8"), Unspecified},
	{netip.MustParsePrefix("10.0.0.0/8"), Private},
	{netip.MustParsePrefix("100.64.0.0/10"), CGNAT},
	{netip.MustParsePrefix("127.0.0.0/8"), Loopback},
	{netip.MustParsePrefix("169.254.0.0/16"), LinkLocal},
	{netip.MustParsePrefix("172.16.0.0/12"), Private},
	{netip.MustParsePrefix("192.0.0.0/24"), Reserved},
	{netip.MustParsePrefix("192.88.99.0/24"), Reserved},
	{netip.MustParsePrefix("192.168.0.0/16"), Private},
	{netip.MustParsePrefix("198.18.0.0/15"), Reserved},
	{netip.MustParsePrefix("224.0.0.0/4"), Multicast},
	{netip.MustParsePrefix("255.255.255.255/32"), Broadcast},
	{netip.MustParsePrefix("240.0.0.0/4"), Reserved},
}

var v6Classes = []prefixClass{
	{netip.MustParsePrefix("::1/128"), Loopback},
	{netip.MustParsePrefix("::/128"), Unspecified},
	{netip.MustParsePrefix("fe80::/10"), LinkLocal},
	{netip.MustParsePrefix("fec0::/10"), Private},
	{netip.MustParsePrefix("fc00::/7"), Private},
	{netip.MustParsePrefix("ff00::/8"), Multicast},
	{netip.MustParsePrefix("100::/64"), Reserved},     // discard-only
	{netip.MustParsePrefix("2001:2::/48"), Reserved},  // benchmarking
	{netip.MustParsePrefix("2001:10::/28"), Reserved}, // ORCHID
	{netip.MustParsePrefix("2001:20::/28"), Reserved}, // ORCHIDv2
}

var global6 = netip.MustParsePrefix("2000::/3")

// Classify says what a is, judging an IPv6 address that carries an IPv4
// one (mapped, compatible, SIIT, NAT64, 6to4, Teredo) as the IPv4 it
// carries. A zone is ignored: fe80::1%eth0 is link-local like fe80::1.
// It does not know this machine's own addresses; see [Judge].
func Classify(a netip.Addr) Class {
	if !a.IsValid() {
		return Invalid
	}
	a = a.WithZone("")
	if metadata[a] {
		return Metadata
	}
	if a.Is4() {
		return classify4(a)
	}
	if a.Is4In6() {
		return classify4(a.Unmap())
	}
	if a == netip.IPv6Loopback() {
		return Loopback
	}
	if a == netip.IPv6Unspecified() {
		return Unspecified
	}
	if v4s := Embedded4(a); v4s != nil {
		for _, v4 := range v4s {
			if c := classify4(v4); c != Public {
				return c
			}
		}
		return Public
	}
	for _, pc := range v6Classes {
		if pc.p.Contains(a) {
			return pc.c
		}
	}
	if !global6.Contains(a) {
		return Reserved
	}
	return Public
}

func classify4(a netip.Addr) Class {
	if metadata[a] {
		return Metadata
	}
	for _, pc := range v4Classes {
		if pc.p.Contains(a) {
			return pc.c
		}
	}
	return Public
}

var (
	compat6  = netip.MustParsePrefix("::/96")
	siit6    = netip.MustParsePrefix("::ffff:0:0:0/96")
	nat64    = netip.MustParsePrefix("64:ff9b::/96")
	nat64loc = netip.MustParsePrefix("64:ff9b:1::/48")
	sixto4   = netip.MustParsePrefix("2002::/16")
	teredo   = netip.MustParsePrefix("2001::/32")
)

// Embedded4 returns the IPv4 addresses an IPv6 address carries, if any.
func Embedded4(a netip.Addr) []netip.Addr {
	b := a.As16()
	last := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	switch {
	case compat6.Contains(a) || siit6.Contains(a) || nat64.Contains(a):
		return []netip.Addr{last}
	case nat64loc.Contains(a):
		// RFC 6052 /48: the IPv4 address sits in bits 48–63 and 72–103,
		// around the reserved "u" octet.
		return []netip.Addr{netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]})}
	case sixto4.Contains(a):
		return []netip.Addr{netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})}
	case teredo.Contains(a):
		server := netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]})
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []netip.Addr{server, client}
	}
	return nil
}
