package webhook

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/secret"
)

func mustSecret(t *testing.T, text string) *secret.Value {
	t.Helper()
	s, err := ParseSecret([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Destroy)
	return s
}

// The Standard Webhooks specification's published example.
const (
	swSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	swID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	swTS     = 1614265330
	swBody   = `{"test": 2432232314}`
	swSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestStandardWebhooksVector(t *testing.T) {
	key := mustSecret(t, swSecret)
	if got := Sign(key, swID, swTS, []byte(swBody)); got != swSig {
		t.Fatalf("signed %s, want %s", got, swSig)
	}
	h := Headers{ID: swID, Timestamp: strconv.Itoa(swTS), Signature: swSig}
	if err := Verify(Keys{Current: key}, h, []byte(swBody), time.Unix(swTS, 0)); err != nil {
		t.Fatal(err)
	}
}

func TestGitHubVector(t *testing.T) {
	key, err := GitHubKey([]byte("It's a Secret to Everybody"))
	if err != nil {
		t.Fatal(err)
	}
	const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got := SignGitHub(key, []byte("Hello, World!")); got != want {
		t.Fatalf("signed %s, want %s", got, want)
	}
	now := time.Now()
	if err := VerifyGitHub(Keys{Current: key}, want, []byte("Hello, World!"), now); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		header, body string
		want         error
	}{
		"other body":      {want, "Hello, World?", ErrNoMatch},
		"no header":       {"", "Hello, World!", ErrMissingHeader},
		"sha1":            {"sha1=" + want[7:], "Hello, World!", ErrMalformed},
		"not hex":         {"sha256=" + strings.Repeat("zz", 32), "Hello, World!", ErrMalformed},
		"short":           {want[:20], "Hello, World!", ErrMalformed},
		"upper-case flip": {"sha256=" + strings.ToUpper(want[7:8]) + want[8:], "Hello, World!", nil},
	}
	for name, c := range cases {
		if err := VerifyGitHub(Keys{Current: key}, c.header, []byte(c.body), now); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", name, err, c.want)
		}
	}
}

func TestVerifyRefusals(t *testing.T) {
	key := mustSecret(t, swSecret)
	other, _ := NewSecret()
	now := time.Unix(swTS, 0)
	ts := strconv.Itoa(swTS)
	otherSig := Sign(other, swID, swTS, []byte(swBody))
	cases := []struct {
		name string
		h    Headers
		body string
		now  time.Time
		want error
	}{
		{"right", Headers{swID, ts, swSig}, swBody, now, nil},
		{"one of several", Headers{swID, ts, otherSig + " v2,abc " + swSig}, swBody, now, nil},
		{"at 5 minutes old", Headers{swID, ts, swSig}, swBody, now.Add(Tolerance), nil},
		{"at 5 minutes ahead", Headers{swID, ts, swSig}, swBody, now.Add(-Tolerance), nil},
		{"past 5 minutes old", Headers{swID, ts, swSig}, swBody, now.Add(Tolerance + time.Second), ErrTooOld},
		{"past 5 minutes ahead", Headers{swID, ts, swSig}, swBody, now.Add(-Tolerance - time.Second), ErrTooNew},
		{"body changed", Headers{swID, ts, swSig}, swBody + " ", now, ErrNoMatch},
		{"id changed", Headers{swID + "x", ts, swSig}, swBody, now, ErrNoMatch},
		{"another secret", Headers{swID, ts, otherSig}, swBody, now, ErrNoMatch},
		{"only another version", Headers{swID, ts, "v2," + swSig[3:]}, swBody, now, ErrNoMatch},
		{"no id", Headers{"", ts, swSig}, swBody, now, ErrMissingHeader},
		{"no timestamp", Headers{swID, "", swSig}, swBody, now, ErrMissingHeader},
		{"no signature", Headers{swID, ts, ""}, swBody, now, ErrMissingHeader},
		{"timestamp not a number", Headers{swID, "16142x", swSig}, swBody, now, ErrMalformed},
		{"negative timestamp", Headers{swID, "-1", swSig}, swBody, now, ErrMalformed},
		{"signature not base64", Headers{swID, ts, "v1,***"}, swBody, now, ErrMalformed},
		{"signature without version", Headers{swID, ts, swSig[3:]}, swBody, now, ErrMalformed},
		{"too many signatures", Headers{swID, ts, strings.Repeat(otherSig+" ", 17)}, swBody, now, ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Verify(Keys{Current: key}, c.h, []byte(c.body), c.now)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "MfKQ9r8") {
				t.Fatal("a refusal shows the secret")
			}
		})
	}
}

// TestRollKeepsThePreviousSecretFor24Hours: after a roll both secrets
// verify; the previous one stops at 24 hours, or at once on RollDone.
func TestRollKeepsThePreviousSecretFor24Hours(t *testing.T) {
	old, _ := NewSecret()
	rolledAt := time.Now()
	keys, err := Keys{Current: old}.Roll(rolledAt)
	if err != nil {
		t.Fatal(err)
	}
	check := func(k Keys, signer *secret.Value, at time.Time) error {
		ts := at.Unix()
		return Verify(k, Headers{"msg_1", strconv.FormatInt(ts, 10), Sign(signer, "msg_1", ts, []byte("{}"))}, []byte("{}"), at)
	}
	if err := check(keys, keys.Current, rolledAt); err != nil {
		t.Fatalf("new secret: %v", err)
	}
	if err := check(keys, old, rolledAt.Add(RollOverlap-time.Second)); err != nil {
		t.Fatalf("previous secret inside 24 h: %v", err)
	}
	if err := check(keys, old, rolledAt.Add(RollOverlap)); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("previous secret at 24 h: %v", err)
	}
	if err := check(keys.RollDone(), old, rolledAt); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("previous secret after roll --done: %v", err)
	}
	if err := VerifyGitHub(keys, SignGitHub(old, []byte("x")), []byte("x"), rolledAt.Add(RollOverlap)); !errors.Is(err, ErrNoMatch) {
		t.Fatalf("GitHub, previous secret at 24 h: %v", err)
	}
}

func TestSecrets(t *testing.T) {
	s, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != SecretSize {
		t.Fatalf("secret of %d bytes", s.Len())
	}
	text, _ := FormatSecret(s)
	back, err := ParseSecret(text.Bytes())
	if err != nil || !back.Equal(s.Bytes()) {
		t.Fatalf("secret changed through its text form: %v", err)
	}
	for _, bad := range []string{"", "whsec_", "whsec_!!!!", "whsec_" + strings.Repeat("A", 8)} {
		if _, err := ParseSecret([]byte(bad)); !errors.Is(err, ErrBadSecret) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
