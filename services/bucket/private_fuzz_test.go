package bucket

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParsePrivate: the owner's --private-host marks are taken only in
// the form Link writes them: what is taken is written back byte for
// byte, each line a bucket name and an endpoint CheckEndpoint keeps as
// it is. Seeds in testdata/fuzz/FuzzParsePrivate.
func FuzzParsePrivate(f *testing.F) {
	for _, s := range []string{"", "nas https://nas.home.arpa\n", "a https://a.test\nb https://b.test:8443\n", "nas https://nas.home.arpa", "nas  https://x.test\n", "nas https://x.test\nnas https://y.test\n", "../x https://x.test\n", "nas http://192.168.1.5\n", "nas https://x.test/\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parsePrivate(data)
		if err != nil {
			return
		}
		if out := encodePrivate(m); !bytes.Equal(out, data) {
			// Link writes names in order: a file of another order is
			// still taken, and what it says is the same.
			again, err := parsePrivate(out)
			if err != nil || len(again) != len(m) {
				t.Fatalf("%q taken, written as %q: %v", data, out, err)
			}
		}
		for name, ep := range m {
			if CheckName(name) != nil || strings.ContainsAny(ep, " \n") {
				t.Fatalf("%q taken with %q → %q", data, name, ep)
			}
			if got, err := CheckEndpoint(ep); err != nil || got != ep {
				t.Fatalf("%q taken with endpoint %q", data, ep)
			}
		}
	})
}

// TestParsePrivateRefusesOtherForms: a line that is not a name and an
// endpoint as Link writes it refuses the file whole; Link's own form is
// taken (the control).
func TestParsePrivateRefusesOtherForms(t *testing.T) {
	if m, err := parsePrivate([]byte("a https://a.test\nnas https://nas.home.arpa\n")); err != nil || m["nas"] != "https://nas.home.arpa" || len(m) != 2 {
		t.Fatalf("Link's own form: %v, %v", m, err)
	}
	for _, s := range []string{"nas https://nas.home.arpa", "nas\n", "nas  https://x.test\n", "nas https://x.test\nnas https://y.test\n", "../x https://x.test\n", "nas http://192.168.1.5\n", "nas HTTPS://X.TEST\n"} {
		if _, err := parsePrivate([]byte(s)); err == nil {
			t.Errorf("%q was taken", s)
		}
	}
}
