// Package webhook signs and checks webhook posts: Link's scheme, which is
// the Standard Webhooks form (HMAC-SHA256 over "id.timestamp.body",
// headers webhook-id, webhook-timestamp and webhook-signature carrying
// one or more space-separated "v1,<base64>" signatures), and GitHub's
// X-Hub-Signature-256 ("sha256=" and the hex HMAC-SHA256 of the raw body).
//
// A webhook's secret is 32 random bytes ([NewSecret]), shown once as
// "whsec_" and its base64. [Keys] hold the current secret and, after a
// roll, the previous one with its expiry 24 hours on, or until the roll is
// done ([Keys.RollDone]); a post signed with either verifies.
//
// # Security
//
// It holds a webhook's secrets only as [secret.Value]s, which never print.
// It trusts nothing in a post. It refuses, with a typed [Refusal] a caller
// tells apart by errors.Is: a missing header ([ErrMissingHeader]), a
// timestamp more than 5 minutes before or after now ([ErrTooOld],
// [ErrTooNew]), a malformed header ([ErrMalformed]), a webhook-id with a
// byte but A-Z, a-z, 0-9, _ and - (Standard Webhooks' ids, msg_…; a .
// would let two posts sign the same text: [ErrBadID]), and a post no held
// secret signed ([ErrNoMatch]). Every comparison is constant-time, and
// every signature in a header is checked against every key, so the time
// taken tells nothing of which one was close.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"runtime"
	"strings"
	"time"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/secret"
)

// Limits of the scheme.
const (
	SecretSize   = 32
	SecretPrefix = "whsec_"
	Tolerance    = 5 * time.Minute
	RollOverlap  = 24 * time.Hour
	maxSigs      = 16
	maxHeader    = 4096
	maxID        = 256
)

// Refusal is why a post was refused (Link's one refusal shape,
// internal/refusal). It says which rule, never a secret; its Rule is
// what callers that log decisions record.
type Refusal = refusal.Refusal

func refused(why string) *Refusal { return &Refusal{Reason: "webhook: " + why, Rule: why} }

// The refusals.
var (
	ErrMissingHeader = refused("a signature header is missing")
	ErrMalformed     = refused("a signature header is malformed")
	ErrBadID         = refused("its webhook-id holds a byte but A-Z, a-z, 0-9, _ and - (a . would make the signed id.timestamp.body ambiguous)")
	ErrTooOld        = refused("its timestamp is more than 5 minutes old")
	ErrTooNew        = refused("its timestamp is more than 5 minutes ahead")
	ErrNoMatch       = refused("no signature matches a secret of this webhook")
	ErrBadSecret     = errors.New("webhook: a secret is whsec_ and the base64 of 24 to 64 bytes")
)

// NewSecret makes a webhook secret of 32 random bytes.
func NewSecret() (*secret.Value, error) {
	b := make([]byte, SecretSize)
	rand.Read(b)
	return secret.New(b)
}

// FormatSecret gives a secret's text form, whsec_<base64>, as a secret:
// the form shown once to the owner and given to a sender.
func FormatSecret(s *secret.Value) (*secret.Value, error) {
	defer runtime.KeepAlive(s)
	raw := s.Bytes()
	out := make([]byte, len(SecretPrefix)+base64.StdEncoding.EncodedLen(len(raw)))
	copy(out, SecretPrefix)
	base64.StdEncoding.Encode(out[len(SecretPrefix):], raw)
	return secret.New(out)
}

// ParseSecret reads a secret's text form (whsec_ optional, as the
// Standard Webhooks libraries take it). The caller zeroes text.
func ParseSecret(text []byte) (*secret.Value, error) {
	t := strings.TrimSpace(string(text))
	t = strings.TrimPrefix(t, SecretPrefix)
	b, err := base64.StdEncoding.DecodeString(t)
	if err != nil || len(b) < 24 || len(b) > 64 {
		clear(b)
		return nil, ErrBadSecret
	}
	return secret.New(b)
}

// Keys are a webhook's secrets: the current one and, during a roll, the
// previous one until PreviousUntil.
type Keys struct {
	Current       *secret.Value
	Previous      *secret.Value
	PreviousUntil time.Time
}

// Roll makes a new current secret and keeps the old one for 24 hours.
func (k Keys) Roll(now time.Time) (Keys, error) {
	n, err := NewSecret()
	if err != nil {
		return k, err
	}
	return Keys{Current: n, Previous: k.Current, PreviousUntil: now.Add(RollOverlap)}, nil
}

// RollDone drops the previous secret at once.
func (k Keys) RollDone() Keys { return Keys{Current: k.Current} }

// valid lists the secrets that verify at now.
func (k Keys) valid(now time.Time) []*secret.Value {
	var out []*secret.Value
	if k.Current != nil {
		out = append(out, k.Current)
	}
	if k.Previous != nil && now.Before(k.PreviousUntil) {
		out = append(out, k.Previous)
	}
	return out
}

func mac(key []byte, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}
