package netclass

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzParseHost: a host that parses prints back to itself, holds only
// the bytes a name may, and an address judged in its IPv4-mapped form is
// judged the same.
func FuzzParseHost(f *testing.F) {
	for _, s := range []string{"example.com", "0x7f.1", "[::ffff:a9fe:a9fe]", "2852039166", "a@b", "xn--p1ai"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHost(s)
		if err != nil {
			return
		}
		again, err := ParseHost(h.String())
		if err != nil || again != h {
			t.Fatalf("%q parsed to %q, which parses to %+v, %v", s, h, again, err)
		}
		if h.IsAddr() {
			if h.Addr.Is4() && Classify(h.Addr) != Classify(netip.AddrFrom16(h.Addr.As16())) {
				t.Fatalf("%s and its mapped form are judged apart", h.Addr)
			}
			return
		}
		if strings.ContainsAny(h.Name, "@%:/\\ \x00*") || strings.ToLower(h.Name) != h.Name {
			t.Fatalf("name %q holds a byte no name may", h.Name)
		}
	})
}

// FuzzClassify: every 16-byte address is judged, and an IPv4-mapped one
// as its IPv4 address.
func FuzzClassify(f *testing.F) {
	f.Add([]byte(netip.MustParseAddr("::ffff:169.254.169.254").AsSlice()))
	f.Add([]byte(netip.MustParseAddr("64:ff9b::7f00:1").AsSlice()))
	f.Add([]byte(netip.MustParseAddr("2002:a9fe:a9fe::").AsSlice()))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, ok := netip.AddrFromSlice(b)
		if !ok {
			return
		}
		c := Classify(a)
		if c == Invalid {
			t.Fatalf("%s judged invalid", a)
		}
		if a.Is4In6() && c != Classify(a.Unmap()) {
			t.Fatalf("%s judged apart from %s", a, a.Unmap())
		}
	})
}
