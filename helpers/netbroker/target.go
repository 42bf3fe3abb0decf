package netbroker

import (
	"strconv"
	"strings"

	"lnk.dev/lnk/internal/refusal"
)

// TargetKind is what a request asks of the proxy.
type TargetKind int

const (
	badTarget TargetKind = iota
	// Tunnel is CONNECT host:port: a TCP tunnel (for TLS).
	Tunnel
	// Forward is an absolute-form http:// request to forward.
	Forward
	// Route is an origin-form request to one of Link's own routes
	// (/_link/…), served by the proxy itself.
	Route
)

// Target is a request line's target, parsed strictly.
type Target struct {
	Kind TargetKind
	Host Host
	Port uint16
	// Path is the origin-form path and query to send upstream (Forward)
	// or the route (Route).
	Path string
}

// RoutePrefix is the path every route of Link's own begins with; no
// request for it is ever forwarded.
const RoutePrefix = "/_link/"

// ParseTarget parses a request line's method and target: CONNECT takes
// an authority (host:port, the port required); other methods take an
// absolute http:// URL (https is refused: use CONNECT) or an origin-form
// path under [RoutePrefix]. Userinfo, fragments and any host [ParseHost]
// refuses are refused.
func ParseTarget(method, uri string) (Target, error) {
	if method == "CONNECT" {
		if strings.ContainsAny(uri, "/?#") {
			return Target{}, malformed("CONNECT takes host:port, not a URL")
		}
		h, port, err := parseAuthority(uri, 0)
		if err != nil {
			return Target{}, err
		}
		return Target{Kind: Tunnel, Host: h, Port: port}, nil
	}
	if strings.HasPrefix(uri, "/") {
		if !strings.HasPrefix(uri, RoutePrefix) {
			return Target{}, malformed("this is a proxy: send an absolute http:// URL or CONNECT host:port")
		}
		return routeTarget(uri)
	}
	scheme, rest, ok := strings.Cut(uri, "://")
	if !ok {
		return Target{}, malformed("request target is neither a URL nor a path")
	}
	switch strings.ToLower(scheme) {
	case "http":
	case "https":
		return Target{}, malformed("an https:// URL goes through CONNECT, not as a plain request")
	default:
		return Target{}, malformed("scheme " + strconv.Quote(scheme) + " is not proxied")
	}
	end := strings.IndexAny(rest, "/?#")
	authority, path := rest, "/"
	if end >= 0 {
		authority, path = rest[:end], rest[end:]
	}
	if strings.HasPrefix(path, "?") {
		path = "/" + path
	}
	if strings.ContainsRune(path, '#') {
		return Target{}, malformed("a fragment (#) is never sent to a server")
	}
	h, port, err := parseAuthority(authority, 80)
	if err != nil {
		return Target{}, err
	}
	if strings.HasPrefix(path, RoutePrefix) && isLoopback(h) {
		// A client that sends even the sandbox's own 127.0.0.1 through
		// HTTP_PROXY asks for $LNK_TOOL_<NAME> this way: the proxy's own
		// route, never a forward to the host's loopback.
		return routeTarget(path)
	}
	return Target{Kind: Forward, Host: h, Port: port, Path: path}, nil
}

// routeTarget is a request for one of Link's own routes at path.
func routeTarget(path string) (Target, error) {
	if strings.ContainsAny(path, "#\\") || strings.Contains(path, "/../") || strings.Contains(path, "/./") || strings.HasSuffix(path, "/..") {
		return Target{}, malformed("a route's path may hold no fragment, backslash or dot segment")
	}
	return Target{Kind: Route, Path: path}, nil
}

// isLoopback reports localhost, or an address of the loopback range.
func isLoopback(h Host) bool {
	if h.IsAddr() {
		return h.Addr.Unmap().IsLoopback()
	}
	return h.Name == "localhost"
}

// parseAuthority splits host[:port]; with def 0 the port is required.
func parseAuthority(s string, def uint16) (Host, uint16, error) {
	if strings.ContainsRune(s, '@') {
		return Host{}, 0, &Refusal{Status: 400, Refusal: refusal.Refusal{Rule: KindUserinfo, Reason: "userinfo (user@host) in a request's host is refused"}}
	}
	host, portStr := s, ""
	if strings.HasPrefix(s, "[") {
		i := strings.IndexByte(s, ']')
		if i < 0 {
			return Host{}, 0, malformed("unclosed bracket in host")
		}
		host, portStr = s[:i+1], s[i+1:]
		if portStr != "" && !strings.HasPrefix(portStr, ":") {
			return Host{}, 0, malformed("junk after ] in host")
		}
		portStr = strings.TrimPrefix(portStr, ":")
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, portStr = s[:i], s[i+1:]
		if strings.ContainsRune(host, ':') {
			return Host{}, 0, malformed("an IPv6 address in a host goes in brackets")
		}
	}
	port := def
	if portStr != "" || def == 0 {
		p, err := ParsePort(portStr)
		if err != nil {
			return Host{}, 0, err
		}
		port = p
	}
	h, err := ParseHost(host)
	if err != nil {
		return Host{}, 0, err
	}
	return h, port, nil
}

// ParsePort parses a decimal port 1–65535, no sign, no leading zero.
func ParsePort(s string) (uint16, error) {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return 0, malformed("port must be a number from 1 to 65535")
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, malformed("port must be a number from 1 to 65535")
	}
	return uint16(n), nil
}
