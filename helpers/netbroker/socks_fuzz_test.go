package netbroker

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzSOCKSRequest feeds a whole SOCKS5 exchange (greeting, RFC 1929
// authentication, request) to the parsers: they never panic, a refusal
// always carries a reason, and a parsed target is one [ParseHost] gives
// back unchanged with a port that is never 0.
func FuzzSOCKSRequest(f *testing.F) {
	f.Add([]byte("\x05\x01\x02\x01\x03lnk\x06secret\x05\x01\x00\x03\x0bexample.com\x01\xbb"))
	f.Add([]byte("\x05\x01\x02\x01\x03lnk\x06secret\x05\x01\x00\x01\x7f\x00\x00\x01\x1f\x90"))
	f.Add([]byte("\x05\x01\x00"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		check := func(err error) {
			var se *socksError
			if !errors.As(err, &se) || se.ref == nil || se.ref.Reason == "" {
				t.Fatalf("a refusal without a reason: %#v", err)
			}
		}
		ok, err := readGreeting(r)
		if err != nil {
			check(err)
			return
		}
		if ok {
			if _, err := readUserPass(r, "secret"); err != nil {
				check(err)
				return
			}
		}
		req, err := readSOCKSRequest(r)
		if err != nil {
			check(err)
			return
		}
		if req.Port == 0 {
			t.Fatal("port 0 parsed")
		}
		again, err := ParseHost(req.Host.String())
		if err != nil || again != req.Host {
			t.Fatalf("%q parsed to %v, which parses again to %v, %v", in, req.Host, again, err)
		}
	})
}
