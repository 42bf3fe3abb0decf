package bucket

import (
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/netclass"
)

// FuzzCheckEndpoint: an endpoint taken is https, or http to a loopback
// address alone; what it is written as is taken again unchanged, and
// holds no user, path or query. Seeds in testdata/fuzz/FuzzCheckEndpoint.
func FuzzCheckEndpoint(f *testing.F) {
	for _, s := range []string{"https://s3.invalid", "http://127.0.0.1:9000", "http://[::1]:9000", "http://0x7f.1", "http://[::ffff:127.0.0.1]:1", "http://s3.invalid", "https://u:p@h.invalid"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out, err := CheckEndpoint(raw)
		if err != nil {
			return
		}
		again, err := CheckEndpoint(out)
		if err != nil || again != out {
			t.Fatalf("%q taken as %q, which reads as %q, %v", raw, out, again, err)
		}
		u, err := url.Parse(out)
		if err != nil || u.User != nil || u.RawQuery != "" || (u.Path != "" && u.Path != "/") {
			t.Fatalf("%q written as %q", raw, out)
		}
		if u.Scheme == "http" {
			a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]"))
			if err != nil || netclass.Classify(a) != netclass.Loopback {
				t.Fatalf("http endpoint %q (from %q) is not a loopback address", out, raw)
			}
		} else if u.Scheme != "https" {
			t.Fatalf("scheme of %q", out)
		}
	})
}
