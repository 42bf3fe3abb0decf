package bucket

import (
	"net/url"
	"strconv"
	"strings"

	"lnk.dev/lnk/internal/netclass"
	"lnk.dev/lnk/internal/refusal"
)

// ErrEndpoint is the rule every refused endpoint matches (errors.Is).
var ErrEndpoint = refusal.Sentinel("bucket-endpoint", "refused endpoint")

// endpointHint is what would allow an endpoint refused.
const endpointHint = "lnk agent bucket add AGENT NAME --s3 https://HOST --bucket B (http:// only to 127.0.0.1 or [::1], on this machine)"

// CheckEndpoint reads an S3 endpoint as Link keeps it: https://HOST[:PORT],
// or http:// only to a loopback address (127.0.0.0/8, ::1), as
// internal/netclass classifies it; no user, path, query or fragment. It
// returns the endpoint written again from what was parsed (an IPv4
// address in its one spelling), which is what rclone is given.
func CheckEndpoint(raw string) (string, error) {
	u, err := url.Parse(raw)
	shown := raw // a user's password in it is never repeated
	if err != nil || u.User != nil {
		shown = "(an endpoint with a user, or unreadable)"
	}
	refuse := func(why string) (string, error) {
		return "", &refusal.Refusal{Reason: "endpoint " + strconv.Quote(shown) + ": " + why, Rule: "bucket-endpoint", Hint: endpointHint, Err: ErrEndpoint}
	}
	if err != nil {
		return refuse("not a URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return refuse("only https:// (or http:// on this machine's loopback) is taken")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || (u.Path != "" && u.Path != "/") {
		return refuse("a user, path, query or fragment is not taken: give the scheme, host and port alone")
	}
	hostport := u.Host
	host, port := hostport, ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		host, port = hostport[:i], hostport[i+1:]
	}
	h, err := netclass.ParseHost(host)
	if err != nil {
		return refuse("host: " + err.Error())
	}
	out := u.Scheme + "://"
	if port != "" {
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil || p == 0 {
			return refuse("port " + strconv.Quote(port) + " is not 1 to 65535")
		}
		out += h.HostPort(uint16(p))
	} else if h.IsAddr() && h.Addr.Is6() {
		out += "[" + h.String() + "]"
	} else {
		out += h.String()
	}
	if u.Scheme == "http" {
		if !h.IsAddr() || netclass.Classify(h.Addr) != netclass.Loopback {
			return refuse("http:// sends the bucket's keys and files unencrypted, so it is taken only to a loopback address (127.0.0.1, [::1]): use https://")
		}
	}
	return out, nil
}

// endpointPort is the TCP port an endpoint CheckEndpoint wrote reaches.
func endpointPort(ep string) uint16 {
	u, err := url.Parse(ep)
	if err != nil {
		return 0
	}
	if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		return uint16(p)
	}
	if u.Scheme == "http" {
		return 80
	}
	return 443
}
