// Package webhookcheck is lnk-webhook's work and both sides of its two
// pipes: the checks the listener writes on its stdin (WriteFrame) and
// lnk-webhook reads (FrameReader), each a post with the webhook's
// secrets read for it, the verdicts it writes back on its stdout
// (WriteVerdict, VerdictReader), and the check of a post's signature in
// Link's scheme or GitHub's (Check), whose verdict says the HTTP status
// and the post's id.
//
// # Security
//
// Both readers trust nothing they read. A check frame is a header line
// of at most 16 KiB, the secrets (at most 1 KiB) and a body of at most
// MaxBody bytes, each length checked before it is read; a verdict is one
// line of at most 4 KiB naming a status the listener knows. Check holds
// the secrets only as secret.Values; a post with no id is refused 503, a
// signature that is malformed 400, one that no held secret made, or a
// post with none, 401.
package webhookcheck

import (
	"errors"
	"strings"
	"time"

	scheme "lnk.dev/lnk/helpers/keybroker/webhook"
	"lnk.dev/lnk/internal/secret"
)

// Limits of a request frame.
const (
	MaxBody   = 1 << 20
	maxHeader = 16 << 10
	maxID     = 256
)

// Request is what the listener hands lnk-webhook of a post: the
// signature's headers and the body.
type Request struct {
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"` // lower-case names
	Length  int               `json:"length"`
	Body    []byte            `json:"-"`
}

// Headers are the request headers a check reads, lower-case.
var Headers = []string{"webhook-id", "webhook-timestamp", "webhook-signature", "x-hub-signature-256", "x-github-delivery"}

// HTTP methods and statuses, spelled here so that lnk-webhook links no
// HTTP code at all.
const (
	MethodPost = "POST"
	MethodGet  = "GET"

	StatusOK                 = 200
	StatusBadRequest         = 400
	StatusUnauthorized       = 401
	StatusServiceUnavailable = 503
)

// Secrets are a webhook's secrets in text form (whsec_…).
type Secrets struct {
	Current       *secret.Value
	Previous      *secret.Value
	PreviousUntil time.Time
}

// Verdict is a check's answer: Status 200 with the post's ID and Scheme
// ("link" or "github"), or the refusal's status and reason.
type Verdict struct {
	Status int    `json:"status"`
	ID     string `json:"id,omitempty"`
	Scheme string `json:"scheme,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func refuse(status int, why string) Verdict { return Verdict{Status: status, Reason: why} }

// Check checks req's signature with s at now.
func Check(s Secrets, req Request, now time.Time) Verdict {
	var k keys
	defer k.destroy()
	return k.check(s, req, now)
}

// keys are the schemes' keys made from one Secrets, each when first
// needed.
type keys struct {
	link, github       scheme.Keys
	haveLink, haveGH   bool
	linkErr, githubErr error
}

func (k *keys) destroy() {
	destroy(k.link)
	destroy(k.github)
	*k = keys{}
}

func (k *keys) check(s Secrets, req Request, now time.Time) Verdict {
	h := req.Headers
	switch {
	case h["webhook-signature"] != "" || h["webhook-id"] != "" || h["webhook-timestamp"] != "":
		if !k.haveLink {
			k.link, k.linkErr = keysOf(s, scheme.ParseSecret)
			k.haveLink = true
		}
		if k.linkErr != nil {
			return refuse(StatusServiceUnavailable, "the webhook's secret can't be read")
		}
		err := scheme.Verify(k.link, scheme.Headers{ID: h["webhook-id"], Timestamp: h["webhook-timestamp"], Signature: h["webhook-signature"]}, req.Body, now)
		if v, bad := verdictOf(err); bad {
			return v
		}
		return withID(h["webhook-id"], "link")
	case h["x-hub-signature-256"] != "":
		if req.Method != MethodPost {
			return refuse(StatusUnauthorized, "a GitHub-signed webhook takes only posts")
		}
		if !k.haveGH {
			k.github, k.githubErr = keysOf(s, func(t []byte) (*secret.Value, error) { return scheme.GitHubKey(t) })
			k.haveGH = true
		}
		if k.githubErr != nil {
			return refuse(StatusServiceUnavailable, "the webhook's secret can't be read")
		}
		if v, bad := verdictOf(scheme.VerifyGitHub(k.github, h["x-hub-signature-256"], req.Body, now)); bad {
			return v
		}
		return withID(h["x-github-delivery"], "github")
	}
	return refuse(StatusUnauthorized, "the post is not signed")
}

func withID(id, sch string) Verdict {
	if id == "" {
		return refuse(StatusServiceUnavailable, "the post has no id")
	}
	if len(id) > maxID || strings.IndexFunc(id, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '/' }) >= 0 {
		return refuse(StatusBadRequest, "the post's id is malformed")
	}
	return Verdict{Status: StatusOK, ID: id, Scheme: sch}
}

func verdictOf(err error) (Verdict, bool) {
	switch {
	case err == nil:
		return Verdict{}, false
	case errors.Is(err, scheme.ErrMalformed), errors.Is(err, scheme.ErrMissingHeader), errors.Is(err, scheme.ErrBadID):
		return refuse(StatusBadRequest, err.Error()), true
	}
	return refuse(StatusUnauthorized, err.Error()), true
}

// keysOf makes the scheme's keys from the texts; a copy of each text is
// given to parse, which zeroes or keeps it.
func keysOf(s Secrets, parse func([]byte) (*secret.Value, error)) (scheme.Keys, error) {
	var k scheme.Keys
	var err error
	if k.Current, err = parse(append([]byte(nil), s.Current.Bytes()...)); err != nil {
		return k, err
	}
	if s.Previous != nil {
		if k.Previous, err = parse(append([]byte(nil), s.Previous.Bytes()...)); err != nil {
			k.Current.Destroy()
			return scheme.Keys{}, err
		}
		k.PreviousUntil = s.PreviousUntil
	}
	return k, nil
}

func destroy(k scheme.Keys) {
	k.Current.Destroy()
	k.Previous.Destroy()
}
