package sealedgrant

import (
	"net/textproto"
	"testing"
)

// CanonicalHeader writes every name CheckHeader takes as net/textproto
// does (the netbroker matches headers in textproto's form).
func FuzzCanonicalHeader(f *testing.F) {
	for _, s := range []string{"authorization", "X-API-KEY", "x-api-key", "-a", "a--b", "9-x", "Proxy-", "AbC-dEf-1g"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if CheckHeader(name) != nil && !isReserved(name) {
			return
		}
		if got, want := CanonicalHeader(name), textproto.CanonicalMIMEHeaderKey(name); got != want {
			t.Fatalf("CanonicalHeader(%q) = %q, textproto says %q", name, got, want)
		}
	})
}

func isReserved(name string) bool {
	for _, r := range reservedHeaders {
		if len(r) == len(name) && CanonicalHeader(name) == r {
			return true
		}
	}
	return false
}
