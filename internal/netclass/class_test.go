package netclass

import (
	"net/netip"
	"testing"
)

// Every address class, each in the spellings a client might send: the
// host string goes through ParseHost, then Classify.
func TestClassifyEverySpelling(t *testing.T) {
	cases := []struct {
		host string
		want Class
	}{
		// loopback
		{"127.0.0.1", Loopback}, {"127.1", Loopback}, {"127.0.1", Loopback},
		{"2130706433", Loopback}, {"0x7f000001", Loopback}, {"0x7f.1", Loopback},
		{"017700000001", Loopback}, {"0177.0.0.1", Loopback}, {"0x7F.0x0.0x0.0x1", Loopback},
		{"127.255.255.254", Loopback}, {"[::1]", Loopback}, {"::1", Loopback},
		{"[0:0:0:0:0:0:0:1]", Loopback}, {"[::ffff:127.0.0.1]", Loopback},
		{"[::ffff:7f00:1]", Loopback}, {"[::127.0.0.1]", Loopback},
		{"[::ffff:0:127.0.0.1]", Loopback}, {"[64:ff9b::127.0.0.1]", Loopback},
		{"[64:ff9b::7f00:1]", Loopback}, {"[2002:7f00:1::]", Loopback},
		{"127.0.0.1.", Loopback},
		// unspecified
		{"0.0.0.0", Unspecified}, {"0", Unspecified}, {"0x0", Unspecified}, {"00", Unspecified},
		{"0.1.2.3", Unspecified}, {"[::]", Unspecified}, {"[::ffff:0.0.0.0]", Unspecified},
		// RFC 1918, ULA, site-local
		{"10.0.0.1", Private}, {"10.1", Private}, {"167772161", Private}, {"012.0.0.1", Private},
		{"172.16.0.1", Private}, {"172.31.255.255", Private}, {"0xac.0x10.0.1", Private},
		{"192.168.1.1", Private}, {"192.168.257", Private}, {"3232235777", Private},
		{"[::ffff:192.168.1.1]", Private}, {"[::ffff:c0a8:101]", Private},
		{"[64:ff9b::10.0.0.1]", Private}, {"[2002:c0a8:101::1]", Private},
		{"[fd00::1]", Private}, {"[fc00::1]", Private}, {"[fec0::1]", Private},
		// CGNAT
		{"100.64.0.1", CGNAT}, {"100.127.255.254", CGNAT}, {"[::ffff:100.64.0.1]", CGNAT},
		// link-local
		{"169.254.1.1", LinkLocal}, {"[fe80::1]", LinkLocal}, {"[febf::1]", LinkLocal},
		{"[::ffff:169.254.1.1]", LinkLocal},
		// multicast, broadcast, reserved
		{"224.0.0.1", Multicast}, {"239.255.255.250", Multicast}, {"[ff02::1]", Multicast},
		{"255.255.255.255", Broadcast}, {"4294967295", Broadcast}, {"[::ffff:255.255.255.255]", Broadcast},
		{"240.0.0.1", Reserved}, {"198.18.0.1", Reserved}, {"198.19.255.255", Reserved},
		{"192.0.0.1", Reserved}, {"192.88.99.1", Reserved}, {"[100::1]", Reserved},
		{"[2001:2::1]", Reserved}, {"[4000::1]", Reserved}, {"[::ffff:240.0.0.1]", Reserved},
		// cloud metadata, in every form
		{"169.254.169.254", Metadata}, {"2852039166", Metadata}, {"0xa9fea9fe", Metadata},
		{"0251.0376.0251.0376", Metadata}, {"169.254.43518", Metadata}, {"0xa9.0xfe.0xa9.0xfe", Metadata},
		{"[::ffff:169.254.169.254]", Metadata}, {"[::ffff:a9fe:a9fe]", Metadata},
		{"[::169.254.169.254]", Metadata}, {"[64:ff9b::169.254.169.254]", Metadata},
		{"[64:ff9b:1:a9fe:a9:fe00::]", Metadata}, {"[2002:a9fe:a9fe::]", Metadata},
		{"169.254.170.2", Metadata}, {"168.63.129.16", Metadata}, {"100.100.100.200", Metadata},
		{"192.0.0.192", Metadata}, {"[fd00:ec2::254]", Metadata}, {"[fd20:ce::254]", Metadata},
		// Teredo carrying a private client (10.0.0.1 xor 0xff = f5ff:fffe)
		{"[2001:0:4136:e378:8000:63bf:f5ff:fffe]", Private},
		// public (documentation addresses: no test names one off this machine)
		{"198.51.100.1", Public}, {"3325256705", Public}, {"0xc6336401", Public}, {"203.0.113.8", Public},
		{"[2001:db8::1111]", Public}, {"[::ffff:198.51.100.1]", Public}, {"[64:ff9b::cb00:7108]", Public},
		{"203.0.113.10", Public}, {"172.32.0.1", Public}, {"100.128.0.1", Public},
	}
	for _, c := range cases {
		h, err := ParseHost(c.host)
		if err != nil {
			t.Errorf("ParseHost(%q): %v", c.host, err)
			continue
		}
		if !h.IsAddr() {
			t.Errorf("ParseHost(%q) = name %q, want an address", c.host, h.Name)
			continue
		}
		if got := Classify(h.Addr); got != c.want {
			t.Errorf("Classify(%q = %s) = %s, want %s", c.host, h.Addr, got, c.want)
		}
	}
}

func TestClassifyZonedLinkLocal(t *testing.T) {
	if got := Classify(netip.MustParseAddr("fe80::1%eth0")); got != LinkLocal {
		t.Fatalf("fe80::1%%eth0 = %s, want link-local", got)
	}
	if got := Classify(netip.Addr{}); got != Invalid {
		t.Fatalf("zero address = %s, want invalid", got)
	}
}
