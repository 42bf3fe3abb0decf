package netbroker

import (
	"fmt"
	"strings"

	"lnk.dev/lnk/internal/refusal"
)

// The kinds of refusal, for a caller telling them apart with errors.As
// and its Rule, and for the log.
const (
	KindMalformed = "malformed"     // 400: a request or host the proxy can't read strictly
	KindUserinfo  = "userinfo"      // 400: user@host in a request
	KindMismatch  = "host-mismatch" // 400: absolute-form URL and Host header disagree
	KindAddress   = "address"       // 403: the address dialed is of a forbidden class
	KindHost      = "host"          // 403: the host is not granted
	KindPort      = "port"          // 403: the port is not granted for the host
	KindRate      = "rate"          // 429: over [internet] per_minute
	KindBusy      = "busy"          // 429: too many connections for this sandbox
	KindTooLarge  = "too-large"     // 431/413: headers or body over the cap
	KindAuth      = "auth"          // 407: a route's secret is wrong
	KindRoute     = "route"         // 404: no such route of Link's
	KindUpstream  = "upstream"      // 502: the checked address did not answer
)

// Refusal is every refusal the proxy makes: Link's one refusal shape
// (internal/refusal: Reason, one lowercase line saying why; Rule, the
// kind; Hint, the `lnk agent allow …` command that would allow it, empty
// where nothing may), with the HTTP status it answers with and the
// address class (for KindAddress).
type Refusal struct {
	refusal.Refusal
	Status int
	Class  Class
}

// Unwrap gives the shape itself, so errors.As finds a
// *refusal.Refusal in a proxy's refusal as in any other.
func (r *Refusal) Unwrap() error { return &r.Refusal }

// Body is what the client is told: the reason, then the hint.
func (r *Refusal) Body() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lnk: refused: %s\n", r.Reason)
	if r.Hint != "" {
		fmt.Fprintf(&b, "hint: %s\n", r.Hint)
	}
	return b.String()
}
