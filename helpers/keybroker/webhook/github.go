package webhook

import (
	"crypto/hmac"
	"encoding/hex"
	"runtime"
	"strings"
	"time"

	"lnk.dev/lnk/internal/secret"
)

// GitHubHeader is the header GitHub signs a delivery in.
const GitHubHeader = "X-Hub-Signature-256"

// SignGitHub returns an X-Hub-Signature-256 value: "sha256=" and the hex
// HMAC-SHA256 of the raw body.
func SignGitHub(key *secret.Value, body []byte) string {
	defer runtime.KeepAlive(key)
	return "sha256=" + hex.EncodeToString(mac(key.Bytes(), body))
}

// VerifyGitHub checks a GitHub delivery's X-Hub-Signature-256 against
// keys at now (GitHub signs no time, so now only picks the keys).
func VerifyGitHub(keys Keys, header string, body []byte, now time.Time) error {
	defer runtime.KeepAlive(keys)
	if header == "" {
		return ErrMissingHeader
	}
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(hexSig) != 64 {
		return ErrMalformed
	}
	sig, err := hex.DecodeString(hexSig)
	if err != nil {
		return ErrMalformed
	}
	match := 0
	for _, k := range keys.valid(now) {
		if hmac.Equal(mac(k.Bytes(), body), sig) {
			match = 1
		}
	}
	if match != 1 {
		return ErrNoMatch
	}
	return nil
}

// GitHubKey makes a Keys value from GitHub's secret as the owner typed
// it: GitHub keys the HMAC with the text itself, not a decoding of it.
func GitHubKey(text []byte) (*secret.Value, error) {
	return secret.New(text)
}
