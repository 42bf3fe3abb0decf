package sealedgrant

import (
	"fmt"
	"strings"
)

// DefaultHeader is the one request header a sealed secret is added to
// when its grant names none: the closed default.
const DefaultHeader = "Authorization"

// MaxHeaders is how many headers one sealed secret may name.
const MaxHeaders = 8

// reservedHeaders describe a request's framing, its body or its
// connection, or are set by the proxy itself (it asks every sealed host
// for an uncompressed, whole answer): never where a host authenticates.
var reservedHeaders = []string{"Host", "Content-Length", "Content-Type", "Content-Encoding",
	"Transfer-Encoding", "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authorization",
	"Proxy-Authenticate", "Te", "Trailer", "Upgrade", "Expect", "Accept-Encoding", "Range", "If-Range"}

// Seal is where a sealed secret may be added: the one host its proxy
// sends it to, and the request headers that host authenticates with.
// The value goes into those headers alone, never a body, a query or a
// path.
type Seal struct {
	Host    string
	Headers []string
}

// CheckHeader refuses a name that is not an HTTP header's (letters,
// digits and -, at most 64) or that is one no host authenticates with.
func CheckHeader(name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%q is not a header's name (letters, digits and -, at most 64)", Printable(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("%q is not a header's name (letters, digits and -, at most 64)", Printable(name))
		}
	}
	for _, r := range reservedHeaders {
		if strings.EqualFold(name, r) {
			return fmt.Errorf("%s describes the request or its connection, never where a host authenticates", CanonicalHeader(name))
		}
	}
	return nil
}

// CanonicalHeader is a checked header name (letters, digits and -) in
// HTTP's canonical form, as net/textproto writes it: a capital at the
// start and after each -, the rest small. Written here so the keybroker,
// whose budget links no net, need not link textproto (which links net).
func CanonicalHeader(name string) string {
	b := []byte(name)
	up := true
	for i, c := range b {
		switch {
		case up && c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case !up && c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
		up = c == '-'
	}
	return string(b)
}

// Printable is s for an error message: at most 80 bytes, control
// characters as '?'.
func Printable(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
