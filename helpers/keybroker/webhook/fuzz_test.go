package webhook

import (
	"strconv"
	"testing"
	"time"
)

// FuzzVerify feeds arbitrary headers and bodies to both schemes: never a
// panic, never a post accepted that the held secret did not sign.
func FuzzVerify(f *testing.F) {
	f.Add(swID, strconv.Itoa(swTS), swSig, swBody, "sha256=00")
	f.Fuzz(func(t *testing.T, id, ts, sig, body, gh string) {
		key, err := ParseSecret([]byte(swSecret))
		if err != nil {
			t.Fatal(err)
		}
		defer key.Destroy()
		now := time.Unix(swTS, 0)
		keys := Keys{Current: key}
		if Verify(keys, Headers{ID: id, Timestamp: ts, Signature: sig}, []byte(body), now) == nil {
			n, _ := strconv.ParseInt(ts, 10, 64)
			want := Sign(key, id, n, []byte(body))
			found := false
			for _, f := range splitFields(sig) {
				if f == want {
					found = true
				}
			}
			if !found {
				t.Fatalf("accepted a post without the right signature: %q", sig)
			}
		}
		if VerifyGitHub(keys, gh, []byte(body), now) == nil && gh != SignGitHub(key, []byte(body)) && !equalFoldHex(gh, SignGitHub(key, []byte(body))) {
			t.Fatalf("accepted a GitHub post without the right signature: %q", gh)
		}
	})
}

func splitFields(s string) []string {
	var out []string
	start := -1
	for i, c := range s {
		space := c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x85 || c == 0xA0
		if space && start >= 0 {
			out = append(out, s[start:i])
			start = -1
		} else if !space && start < 0 {
			start = i
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

func equalFoldHex(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'F' {
			x += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
