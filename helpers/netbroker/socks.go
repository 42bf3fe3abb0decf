package netbroker

import (
	"crypto/subtle"
	"errors"
	"io"
	"net/netip"
	"strings"

	"lnk.dev/lnk/internal/refusal"
)

// SOCKS5 (RFC 1928) with username/password authentication (RFC 1929):
// the proxy's door for programs that ignore HTTP_PROXY. Only CONNECT is
// served; the target it names goes through [ParseHost] and the proxy's
// one [Checker], exactly as a CONNECT request's does.

// socksVersion is the first byte of every SOCKS5 greeting and request;
// the proxy tells a SOCKS5 client from an HTTP one by it.
const socksVersion = 0x05

// SOCKS5 methods (RFC 1928 §3).
const (
	socksNoAuth       = 0x00
	socksUserPass     = 0x02
	socksNoAcceptable = 0xFF
)

// SOCKS5 commands (RFC 1928 §4).
const (
	socksConnect   = 0x01
	socksBind      = 0x02
	socksAssociate = 0x03
)

// SOCKS5 address types (RFC 1928 §5).
const (
	socksIPv4   = 0x01
	socksDomain = 0x03
	socksIPv6   = 0x04
)

// SOCKS5 reply codes (RFC 1928 §6).
const (
	socksOK              = 0x00
	socksGeneralFailure  = 0x01
	socksNotAllowed      = 0x02
	socksHostUnreachable = 0x04
	socksRefused         = 0x05
	socksCmdUnsupported  = 0x07
	socksAddrUnsupported = 0x08
)

// SOCKSUser is the username a sandbox sends; its password is the
// proxy's own secret ([Config.Secret]).
const SOCKSUser = "lnk"

// socksError is a failed SOCKS5 exchange: the reply code the client is
// sent (0 for none: the exchange can't be answered) and the refusal
// logged.
type socksError struct {
	code byte
	ref  *Refusal
}

func (e *socksError) Error() string { return e.ref.Reason }

// socksMalformed is a request the proxy can't read strictly. Its reply
// code fits the request stage; at the greeting and authentication stages
// the caller sends that stage's own failure instead.
func socksMalformed(reason string) *socksError {
	return &socksError{code: socksGeneralFailure, ref: malformed("socks5: " + reason)}
}

// readGreeting reads a client's greeting (VER NMETHODS METHODS) and
// reports whether it offers username/password.
func readGreeting(r io.Reader) (bool, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return false, socksMalformed("greeting cut short")
	}
	if hdr[0] != socksVersion {
		return false, socksMalformed("not a SOCKS5 greeting")
	}
	if hdr[1] == 0 {
		return false, socksMalformed("a greeting offering no method")
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(r, methods); err != nil {
		return false, socksMalformed("greeting cut short")
	}
	for _, m := range methods {
		if m == socksUserPass {
			return true, nil
		}
	}
	return false, nil
}

// readUserPass reads RFC 1929's VER ULEN UNAME PLEN PASSWD and reports
// whether the username is [SOCKSUser] and the password is secret, the
// password compared in constant time.
func readUserPass(r io.Reader, secret string) (bool, error) {
	var b [2]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return false, socksMalformed("authentication cut short")
	}
	if b[0] != 0x01 {
		return false, socksMalformed("not a username/password (RFC 1929) exchange")
	}
	user, err := readLenPrefixed(r, int(b[1]))
	if err != nil {
		return false, err
	}
	if _, err := io.ReadFull(r, b[:1]); err != nil {
		return false, socksMalformed("authentication cut short")
	}
	pass, err := readLenPrefixed(r, int(b[0]))
	if err != nil {
		return false, err
	}
	userOK := subtle.ConstantTimeCompare(user, []byte(SOCKSUser))
	passOK := subtle.ConstantTimeCompare(pass, []byte(secret))
	return secret != "" && userOK&passOK == 1, nil
}

func readLenPrefixed(r io.Reader, n int) ([]byte, error) {
	if n == 0 {
		return nil, socksMalformed("an empty username or password")
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, socksMalformed("authentication cut short")
	}
	return b, nil
}

// socksRequest is a parsed SOCKS5 request: CONNECT to Host:Port.
type socksRequest struct {
	Host Host
	Port uint16
}

// readSOCKSRequest reads VER CMD RSV ATYP DST.ADDR DST.PORT strictly:
// only CONNECT (BIND and UDP ASSOCIATE get "command not supported"), RSV
// zero, a domain parsed by [ParseHost] (so odd IPv4 spellings, NUL,
// userinfo and Unicode are judged as in a CONNECT line), port 1–65535.
func readSOCKSRequest(r io.Reader) (socksRequest, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return socksRequest{}, socksMalformed("request cut short")
	}
	if hdr[0] != socksVersion {
		return socksRequest{}, socksMalformed("not a SOCKS5 request")
	}
	switch hdr[1] {
	case socksConnect:
	case socksBind, socksAssociate:
		return socksRequest{}, &socksError{code: socksCmdUnsupported, ref: &Refusal{Status: 403, Refusal: refusal.Refusal{Rule: KindMalformed, Reason: "socks5: only CONNECT is served (no BIND, no UDP ASSOCIATE)"}}}
	default:
		return socksRequest{}, &socksError{code: socksCmdUnsupported, ref: malformed("socks5: unknown command")}
	}
	if hdr[2] != 0 {
		return socksRequest{}, socksMalformed("reserved byte not zero")
	}
	var host string
	switch hdr[3] {
	case socksIPv4:
		var a [4]byte
		if _, err := io.ReadFull(r, a[:]); err != nil {
			return socksRequest{}, socksMalformed("request cut short")
		}
		host = netip.AddrFrom4(a).String()
	case socksIPv6:
		var a [16]byte
		if _, err := io.ReadFull(r, a[:]); err != nil {
			return socksRequest{}, socksMalformed("request cut short")
		}
		host = netip.AddrFrom16(a).String()
	case socksDomain:
		var n [1]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return socksRequest{}, socksMalformed("request cut short")
		}
		if n[0] == 0 {
			return socksRequest{}, socksMalformed("empty host")
		}
		b := make([]byte, n[0])
		if _, err := io.ReadFull(r, b); err != nil {
			return socksRequest{}, socksMalformed("request cut short")
		}
		host = string(b)
	default:
		return socksRequest{}, &socksError{code: socksAddrUnsupported, ref: malformed("socks5: unknown address type")}
	}
	var p [2]byte
	if _, err := io.ReadFull(r, p[:]); err != nil {
		return socksRequest{}, socksMalformed("request cut short")
	}
	port := uint16(p[0])<<8 | uint16(p[1])
	if port == 0 {
		return socksRequest{}, socksMalformed("port 0")
	}
	h, err := ParseHost(host)
	if err != nil {
		var ref *Refusal
		if !errors.As(err, &ref) {
			ref = malformed(err.Error())
		}
		return socksRequest{}, &socksError{code: socksGeneralFailure, ref: ref}
	}
	return socksRequest{Host: h, Port: port}, nil
}

// socksReply is VER REP RSV ATYP BND.ADDR BND.PORT with 0.0.0.0:0 bound:
// the proxy's own addresses are nothing a sandbox needs.
func socksReply(code byte) []byte {
	return []byte{socksVersion, code, 0, socksIPv4, 0, 0, 0, 0, 0, 0}
}

// socksCode is the reply for a refusal of the proxy's: a rule or an
// address class is "not allowed by ruleset", an upstream that did not
// answer is "connection refused", a name that does not resolve is "host
// unreachable".
func socksCode(ref *Refusal) byte {
	switch ref.Rule {
	case KindHost, KindPort, KindAddress, KindRate, KindBusy, KindRoute, KindUserinfo, KindAuth:
		return socksNotAllowed
	case KindUpstream:
		if strings.HasSuffix(ref.Reason, "does not resolve") {
			return socksHostUnreachable
		}
		return socksRefused
	}
	return socksGeneralFailure
}
