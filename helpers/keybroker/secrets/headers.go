package secrets

import (
	"fmt"

	"lnk.dev/lnk/internal/sealedgrant"
)

// DefaultHeader is the one request header a sealed secret is added to
// when its grant names none: the closed default (package sealedgrant,
// which the netbroker shares).
const DefaultHeader = sealedgrant.DefaultHeader

// MaxHeaders is how many headers one sealed secret may name.
const MaxHeaders = sealedgrant.MaxHeaders

// Seal is where a sealed secret may be added: the one host its proxy
// sends it to, and the request headers that host authenticates with
// (package sealedgrant).
type Seal = sealedgrant.Seal

// Seal is e's host and the headers its value is added to (Authorization
// when the grant names none).
func (e *Entry) Seal() Seal {
	h := e.Headers
	if len(h) == 0 {
		h = []string{DefaultHeader}
	}
	return Seal{Host: e.InternetHost, Headers: append([]string(nil), h...)}
}

// CheckHeader refuses a name that is not an HTTP header's (letters,
// digits and -, at most 64) or that is one no host authenticates with
// (sealedgrant.CheckHeader, as a refusal of the file: ErrSyntax).
func CheckHeader(name string) error {
	if err := sealedgrant.CheckHeader(name); err != nil {
		return fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	return nil
}

// checkHeaders checks a secret's header names, in canonical form, no
// two alike, at most MaxHeaders, and only for a sealed secret.
func checkHeaders(host string, headers []string) ([]string, error) {
	if len(headers) == 0 {
		return nil, nil
	}
	if host == "" {
		return nil, fmt.Errorf("%w: headers name where a sealed secret is added, and this one is not sealed (no internet host)", ErrSyntax)
	}
	if len(headers) > MaxHeaders {
		return nil, fmt.Errorf("%w: more than %d headers", ErrSyntax, MaxHeaders)
	}
	out := make([]string, 0, len(headers))
	for _, h := range headers {
		if err := CheckHeader(h); err != nil {
			return nil, err
		}
		c := canonicalHeader(h)
		for _, o := range out {
			if o == c {
				return nil, fmt.Errorf("%w: header %s named twice", ErrSyntax, c)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// canonicalHeader is a checked header name in HTTP's canonical form
// (sealedgrant.CanonicalHeader).
func canonicalHeader(name string) string { return sealedgrant.CanonicalHeader(name) }
