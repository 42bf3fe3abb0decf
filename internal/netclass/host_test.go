package netclass

import (
	"errors"
	"strings"
	"testing"
)

func TestParseHostRefuses(t *testing.T) {
	for _, s := range []string{
		"", "exa\x00mple.com", "example.com\x00.evil.com", "user@example.com", "a@b",
		"ex ample.com", "exämple.com", "пример.рф", "example..com", ".example.com",
		"-a.example.com", "a-.example.com", "256.0.0.1", "1.2.3.4.5", "4294967296",
		"0x100000000", "1.16777216", "1.2.65536", "08.0.0.1", "0x7g.0.0.1", "foo.123",
		"example.0x1", "[fe80::1%25eth0]", "fe80::1%eth0", "[::1", "[1.2.3.4]", "ex_ample.com:80",
		"example.com/evil", "a\\b.com",
	} {
		if h, err := ParseHost(s); err == nil {
			t.Errorf("ParseHost(%q) = %+v, want a refusal", s, h)
		} else {
			var he *HostError
			if !errors.As(err, &he) || he.Reason == "" || he.Userinfo != strings.Contains(s, "@") {
				t.Errorf("ParseHost(%q): %v is not a HostError saying why", s, err)
			}
		}
	}
}

func TestParseHostNormalises(t *testing.T) {
	for in, want := range map[string]string{
		"Example.COM":           "example.com",
		"example.com.":          "example.com",
		"xn--e1afmkfd.xn--p1ai": "xn--e1afmkfd.xn--p1ai",
		"123.example.com":       "123.example.com",
		"0x7f.1":                "127.0.0.1",
		"[::FFFF:1.2.3.4]":      "::ffff:1.2.3.4",
	} {
		h, err := ParseHost(in)
		if err != nil {
			t.Errorf("ParseHost(%q): %v", in, err)
			continue
		}
		if h.String() != want {
			t.Errorf("ParseHost(%q) = %q, want %q", in, h, want)
		}
	}
}
