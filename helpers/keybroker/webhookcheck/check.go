// Package webhookcheck is lnk-webhook's work, both sides of its pipes:
// the request the listener writes (WriteRequest) and lnk-webhook reads
// (ReadRequest), the secrets on its stdin, and the check of a post's
// signature in Link's scheme or GitHub's (Check), whose verdict says the
// HTTP status and the post's id.
//
// # Security
//
// ReadRequest trusts nothing it reads: a frame is a header line of at
// most 16 KiB and a body of at most MaxBody bytes, each length checked
// before it is read. Check holds the secrets only as secret.Values; a
// post with no id is refused 503, a signature that is malformed 400, one
// that no held secret made, or a post with none, 401.
package webhookcheck

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// WriteRequest writes req as one frame: a JSON line, then the body.
func WriteRequest(w io.Writer, req Request) error {
	req.Length = len(req.Body)
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := w.Write(append(line, '\n')); err != nil {
		return err
	}
	_, err = w.Write(req.Body)
	return err
}

// ReadRequest reads one frame.
func ReadRequest(r io.Reader) (Request, error) {
	br := bufio.NewReaderSize(r, 4096)
	var line []byte
	for {
		part, isPrefix, err := br.ReadLine()
		if err != nil {
			return Request{}, fmt.Errorf("webhook request: %w", err)
		}
		line = append(line, part...)
		if len(line) > maxHeader {
			return Request{}, errors.New("webhook request: its header line is too long")
		}
		if !isPrefix {
			break
		}
	}
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return Request{}, fmt.Errorf("webhook request: %w", err)
	}
	if req.Length < 0 || req.Length > MaxBody {
		return Request{}, errors.New("webhook request: a body is 0 to 1 MiB")
	}
	if req.Method != MethodPost && req.Method != MethodGet {
		return Request{}, errors.New("webhook request: only POST and GET are checked")
	}
	req.Body = make([]byte, req.Length)
	if _, err := io.ReadFull(br, req.Body); err != nil {
		return Request{}, fmt.Errorf("webhook request: its body: %w", err)
	}
	return req, nil
}

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
	h := req.Headers
	switch {
	case h["webhook-signature"] != "" || h["webhook-id"] != "" || h["webhook-timestamp"] != "":
		keys, err := keysOf(s, scheme.ParseSecret)
		if err != nil {
			return refuse(StatusServiceUnavailable, "the webhook's secret can't be read")
		}
		defer destroy(keys)
		err = scheme.Verify(keys, scheme.Headers{ID: h["webhook-id"], Timestamp: h["webhook-timestamp"], Signature: h["webhook-signature"]}, req.Body, now)
		if v, bad := verdictOf(err); bad {
			return v
		}
		return withID(h["webhook-id"], "link")
	case h["x-hub-signature-256"] != "":
		if req.Method != MethodPost {
			return refuse(StatusUnauthorized, "a GitHub-signed webhook takes only posts")
		}
		keys, err := keysOf(s, func(t []byte) (*secret.Value, error) { return scheme.GitHubKey(t) })
		if err != nil {
			return refuse(StatusServiceUnavailable, "the webhook's secret can't be read")
		}
		defer destroy(keys)
		if v, bad := verdictOf(scheme.VerifyGitHub(keys, h["x-hub-signature-256"], req.Body, now)); bad {
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
	case errors.Is(err, scheme.ErrMalformed), errors.Is(err, scheme.ErrMissingHeader):
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
