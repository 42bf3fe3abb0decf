package webhook

import (
	"crypto/hmac"
	"encoding/base64"
	"runtime"
	"strconv"
	"strings"
	"time"

	"lnk.dev/lnk/internal/secret"
)

// Headers are a post's Standard Webhooks headers, as received.
type Headers struct {
	ID        string // webhook-id
	Timestamp string // webhook-timestamp, Unix seconds
	Signature string // webhook-signature: "v1,<base64>" separated by spaces
}

// Sign returns the webhook-signature value for a post: "v1," and the
// base64 HMAC-SHA256 over "id.timestamp.body".
func Sign(key *secret.Value, id string, timestamp int64, body []byte) string {
	defer runtime.KeepAlive(key)
	sum := mac(key.Bytes(), []byte(id), []byte("."), []byte(strconv.FormatInt(timestamp, 10)), []byte("."), body)
	return "v1," + base64.StdEncoding.EncodeToString(sum)
}

// Verify checks a post signed in Link's scheme against keys at now.
func Verify(keys Keys, h Headers, body []byte, now time.Time) error {
	defer runtime.KeepAlive(keys)
	if h.ID == "" || h.Timestamp == "" || h.Signature == "" {
		return ErrMissingHeader
	}
	if len(h.ID) > maxID || len(h.Signature) > maxHeader || len(h.Timestamp) > 20 {
		return ErrMalformed
	}
	if !validID(h.ID) {
		return ErrBadID
	}
	ts, err := strconv.ParseInt(h.Timestamp, 10, 64)
	if err != nil || ts < 0 {
		return ErrMalformed
	}
	sent := time.Unix(ts, 0)
	if now.Sub(sent) > Tolerance {
		return ErrTooOld
	}
	if sent.Sub(now) > Tolerance {
		return ErrTooNew
	}
	var sigs [][]byte
	for _, f := range strings.Fields(h.Signature) {
		version, sig, ok := strings.Cut(f, ",")
		if !ok {
			return ErrMalformed
		}
		if version != "v1" {
			continue // another scheme's signature: not ours to judge
		}
		b, err := base64.StdEncoding.Strict().DecodeString(sig)
		if err != nil {
			return ErrMalformed
		}
		sigs = append(sigs, b)
	}
	if len(sigs) > maxSigs {
		return ErrMalformed
	}
	prefix := []byte(h.ID + "." + strconv.FormatInt(ts, 10) + ".")
	match := 0
	for _, k := range keys.valid(now) {
		want := mac(k.Bytes(), prefix, body)
		for _, s := range sigs {
			if hmac.Equal(want, s) {
				match = 1
			}
		}
	}
	if match != 1 {
		return ErrNoMatch
	}
	return nil
}

// validID reports an id of A-Z, a-z, 0-9, _ and - alone: the signed text
// is id.timestamp.body, so an id holding a . could sign as another id and
// timestamp would.
func validID(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
