package web

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"lnk.dev/lnk/internal/netclass"
)

// target is one hop's URL, read strictly: its scheme, its host as the
// proxy reads one, and its port.
type target struct {
	u      *url.URL
	host   netclass.Host
	port   uint16
	secure bool
}

// parseTarget reads raw as a URL Link Web may fetch: http:// or
// https:// only, no login, a host [netclass.ParseHost] reads (every
// IPv4 spelling read as the address it means), a port of 1–65535.
func parseTarget(u *url.URL) (target, error) {
	switch u.Scheme {
	case "http", "https":
	default:
		return target{}, refusef("only http:// and https:// are fetched, not %q", u.Scheme+":")
	}
	if u.Opaque != "" || u.Host == "" {
		return target{}, refusef("the URL has no host")
	}
	if u.User != nil {
		return target{}, refusef("a URL with a login (user@host) is never fetched")
	}
	h, err := netclass.ParseHost(u.Hostname())
	if err != nil {
		return target{}, refusef("the URL's host: %v", err)
	}
	t := target{u: u, host: h, secure: u.Scheme == "https", port: 80}
	if t.secure {
		t.port = 443
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			return target{}, refusef("the URL's port %q is not 1–65535", p)
		}
		t.port = uint16(n)
	} else if strings.HasSuffix(u.Host, ":") {
		return target{}, refusef("the URL's port is empty")
	}
	return t, nil
}

// hostPort is the host and port as the transport dials them.
func (t target) hostPort() string { return t.host.HostPort(t.port) }

// privateSet is --private-host: hosts fetched wherever they resolve.
type privateSet map[string]bool

func newPrivateSet(hosts []string) (privateSet, error) {
	s := privateSet{}
	for _, h := range hosts {
		ph, err := netclass.ParseHost(h)
		if err != nil {
			return nil, fmt.Errorf("--private-host %q: %v", h, err)
		}
		s[ph.String()] = true
	}
	return s, nil
}

func (s privateSet) has(h netclass.Host) bool { return s[h.String()] }
