package tooldef

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// CheckURL accepts https://, or http:// to this machine only (a loopback
// address or "localhost"), with no user information and no fragment.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrURL, err)
	}
	if u.User != nil {
		return fmt.Errorf("%w: %q carries a user or password; give a token with --header instead", ErrURL, raw)
	}
	if u.Fragment != "" || u.Opaque != "" || u.Host == "" {
		return fmt.Errorf("%w: %q is not an absolute http(s) URL", ErrURL, raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		h := strings.ToLower(u.Hostname())
		if h == "localhost" {
			return nil
		}
		if a, err := netip.ParseAddr(h); err == nil && a.Unmap().IsLoopback() {
			return nil
		}
		return fmt.Errorf("%w: %q is http:// to another machine; only https:// leaves this one", ErrURL, raw)
	default:
		return fmt.Errorf("%w: %q is neither https:// nor http://", ErrURL, raw)
	}
}
