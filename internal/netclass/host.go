package netclass

import (
	"net/netip"
	"strconv"
	"strings"
)

// Host is a host as Link judges it, after strict parsing: either a
// name (lowercase ASCII, no trailing dot) or an address, never both.
type Host struct {
	Name string
	Addr netip.Addr
}

// IsAddr reports whether h is an address rather than a name.
func (h Host) IsAddr() bool { return h.Addr.IsValid() }

// String is the name, or the address (IPv6 without brackets).
func (h Host) String() string {
	if h.IsAddr() {
		return h.Addr.String()
	}
	return h.Name
}

// HostPort joins h and port as a dialer or a URL wants them.
func (h Host) HostPort(port uint16) string {
	p := strconv.Itoa(int(port))
	if h.IsAddr() && h.Addr.Is6() {
		return "[" + h.Addr.String() + "]:" + p
	}
	return h.String() + ":" + p
}

// HostError is why a host is refused: userinfo, or a host that does
// not read strictly.
type HostError struct {
	Userinfo bool   // user@host
	Reason   string // one lowercase line
}

func (e *HostError) Error() string { return e.Reason }

func malformed(reason string) *HostError { return &HostError{Reason: reason} }

// ParseHost parses a host as it appears in a request: a name, an IPv4
// address in any spelling a C library accepts (decimal, octal, hex, short
// forms — normalised to the address they mean), or an IPv6 address, in
// brackets or not. It refuses NUL and control bytes, userinfo, zones,
// non-ASCII names (IDNA must arrive in its xn-- form), empty labels,
// overflowing IPv4 spellings and a name whose last label is numeric but
// no valid address.
func ParseHost(s string) (Host, error) {
	if s == "" {
		return Host{}, malformed("empty host")
	}
	if len(s) > 255 {
		return Host{}, malformed("host longer than 255 bytes")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '@':
			return Host{}, &HostError{Userinfo: true, Reason: "userinfo (user@host) in a request's host is refused"}
		case c == '%':
			return Host{}, malformed("an address with a zone or a percent-encoded host is refused")
		case c >= 0x80:
			return Host{}, malformed("a host name in Unicode is refused: send its IDNA (xn--) form")
		case c <= ' ' || c == 0x7f:
			return Host{}, malformed("a control byte, space or NUL in a host is refused")
		}
	}
	if s[0] == '[' {
		if s[len(s)-1] != ']' {
			return Host{}, malformed("unclosed bracket in host")
		}
		return parse6(s[1 : len(s)-1])
	}
	if strings.Contains(s, ":") {
		return parse6(s)
	}
	s = strings.ToLower(strings.TrimSuffix(s, "."))
	labels := strings.Split(s, ".")
	if numericLabel(labels[len(labels)-1]) {
		a, ok := parseIPv4(labels)
		if !ok {
			return Host{}, malformed("malformed IPv4 address " + strconv.Quote(s))
		}
		return Host{Addr: a}, nil
	}
	if len(s) > 253 {
		return Host{}, malformed("host name longer than 253 bytes")
	}
	for _, l := range labels {
		if err := checkLabel(l); err != nil {
			return Host{}, err
		}
	}
	return Host{Name: s}, nil
}

func parse6(s string) (Host, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return Host{}, malformed("malformed IPv6 address " + strconv.Quote(s))
	}
	if a.Zone() != "" {
		return Host{}, malformed("an address with a zone is refused")
	}
	return Host{Addr: a}, nil
}

func checkLabel(l string) error {
	if l == "" {
		return malformed("empty label in host name")
	}
	if len(l) > 63 {
		return malformed("host name label longer than 63 bytes")
	}
	if l[0] == '-' || l[len(l)-1] == '-' {
		return malformed("host name label starts or ends with '-'")
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return malformed("character " + strconv.QuoteRune(rune(c)) + " in host name")
		}
	}
	return nil
}

// numericLabel reports whether l reads as a number: decimal digits, or
// 0x followed by hex digits. A name ending in one is an IPv4 spelling.
func numericLabel(l string) bool {
	if l == "" {
		return false
	}
	if len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
		for i := 2; i < len(l); i++ {
			if !isHex(l[i]) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// parseIPv4 reads inet_aton's forms: a, a.b, a.b.c, a.b.c.d, each part
// decimal, octal (leading 0) or hex (0x); the last part fills the bytes
// left. Overflow is refused.
func parseIPv4(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v [4]uint64
	for i, p := range parts {
		n, ok := parseNumber(p)
		if !ok {
			return netip.Addr{}, false
		}
		v[i] = n
	}
	n := len(parts)
	for i := 0; i < n-1; i++ {
		if v[i] > 255 {
			return netip.Addr{}, false
		}
	}
	if v[n-1] >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	}
	var b [4]byte
	for i := 0; i < n-1; i++ {
		b[i] = byte(v[i])
	}
	last := v[n-1]
	for i := 3; i >= n-1; i-- {
		b[i] = byte(last)
		last >>= 8
	}
	return netip.AddrFrom4(b), true
}

func parseNumber(p string) (uint64, bool) {
	base := 10
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if p == "" || len(p) > 12 {
		return 0, false
	}
	n, err := strconv.ParseUint(p, base, 64)
	return n, err == nil
}
