package toolbridge

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// fromThisMachine reports whether req names this machine's loopback as
// its host and, where it has one, as its origin: the sandbox's own
// 127.0.0.1, as $LNK_TOOL_<NAME> says. Anything else is what DNS
// rebinding looks like — a page of another site, its name now resolving
// to loopback, posting to the route — and is refused.
func fromThisMachine(req *http.Request) bool {
	if !loopbackHost(req.Host) {
		return false
	}
	origins := req.Header.Values("Origin")
	if len(origins) == 0 {
		return true
	}
	if len(origins) > 1 {
		return false
	}
	u, err := url.Parse(origins[0])
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" {
		return false // "null" among them
	}
	return loopbackHost(u.Host)
}

// loopbackHost reports a host[:port] that is localhost or a loopback
// address; an empty host (a request with none) is this machine's too.
func loopbackHost(hostport string) bool {
	if hostport == "" {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback() && a.Zone() == ""
}
