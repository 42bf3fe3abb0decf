package webhookcheck

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	scheme "lnk.dev/lnk/helpers/keybroker/webhook"
	"lnk.dev/lnk/internal/secret"
)

// The Standard Webhooks specification's published example, and GitHub's
// documented example ("Validating webhook deliveries").
const (
	swSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	swID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	swTS     = 1614265330
	swBody   = `{"test": 2432232314}`
	swSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

	ghSecret = "It's a Secret to Everybody"
	ghBody   = "Hello, World!"
	ghSig    = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
)

func text(t *testing.T, s string) *secret.Value {
	t.Helper()
	v, err := secret.FromString(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Destroy)
	return v
}

// roundTrip passes req and s through the pipe's own frame, as the
// listener writes it and lnk-webhook reads it.
func roundTrip(t *testing.T, s Secrets, req Request) (Secrets, Request) {
	t.Helper()
	var b bytes.Buffer
	if err := WriteFrame(&b, 7, s, req); err != nil {
		t.Fatal(err)
	}
	seq, raw, r2, err := NewFrameReader(&b).Next()
	if err != nil || seq != 7 {
		t.Fatalf("seq %d: %v", seq, err)
	}
	s2, err := ReadSecrets(bytes.NewReader(raw))
	clear(raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s2.Destroy)
	return s2, r2
}

func swRequest(id, ts, sig, body string) Request {
	return Request{Method: MethodPost, Headers: map[string]string{"webhook-id": id, "webhook-timestamp": ts, "webhook-signature": sig}, Body: []byte(body)}
}

// TestExternalVectorsVerify: both published examples verify through the
// pipes and the check, and every tampering is refused.
func TestExternalVectorsVerify(t *testing.T) {
	at := time.Unix(swTS, 0)
	ts := strconv.Itoa(swTS)
	s, req := roundTrip(t, Secrets{Current: text(t, swSecret)}, swRequest(swID, ts, swSig, swBody))
	if v := Check(s, req, at); v.Status != StatusOK || v.ID != swID || v.Scheme != "link" {
		t.Fatalf("the Standard Webhooks vector: %+v", v)
	}
	gs, greq := roundTrip(t, Secrets{Current: text(t, ghSecret)}, Request{Method: MethodPost,
		Headers: map[string]string{"x-hub-signature-256": ghSig, "x-github-delivery": "d-1"}, Body: []byte(ghBody)})
	if v := Check(gs, greq, time.Now()); v.Status != StatusOK || v.ID != "d-1" || v.Scheme != "github" {
		t.Fatalf("GitHub's example: %+v", v)
	}

	other := "whsec_" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	cases := map[string]struct {
		s    Secrets
		req  Request
		now  time.Time
		want int
	}{
		"time":             {Secrets{Current: text(t, swSecret)}, swRequest(swID, strconv.Itoa(swTS+1), swSig, swBody), at, StatusUnauthorized},
		"id":               {Secrets{Current: text(t, swSecret)}, swRequest(swID+"x", ts, swSig, swBody), at, StatusUnauthorized},
		"body":             {Secrets{Current: text(t, swSecret)}, swRequest(swID, ts, swSig, swBody+" "), at, StatusUnauthorized},
		"secret":           {Secrets{Current: text(t, other)}, swRequest(swID, ts, swSig, swBody), at, StatusUnauthorized},
		"six minutes late": {Secrets{Current: text(t, swSecret)}, swRequest(swID, ts, swSig, swBody), at.Add(6 * time.Minute), StatusUnauthorized},
		"old secret past 24 h": {Secrets{Current: text(t, other), Previous: text(t, swSecret), PreviousUntil: at.Add(-time.Second)},
			swRequest(swID, ts, swSig, swBody), at, StatusUnauthorized},
		"unsigned":     {Secrets{Current: text(t, swSecret)}, Request{Method: MethodPost, Body: []byte(swBody)}, at, StatusUnauthorized},
		"malformed":    {Secrets{Current: text(t, swSecret)}, swRequest(swID, ts, "v1,!!", swBody), at, StatusBadRequest},
		"github body":  {Secrets{Current: text(t, ghSecret)}, Request{Method: MethodPost, Headers: map[string]string{"x-hub-signature-256": ghSig, "x-github-delivery": "d"}, Body: []byte(ghBody + "?")}, at, StatusUnauthorized},
		"github no id": {Secrets{Current: text(t, ghSecret)}, Request{Method: MethodPost, Headers: map[string]string{"x-hub-signature-256": ghSig}, Body: []byte(ghBody)}, at, StatusServiceUnavailable},
		"github GET":   {Secrets{Current: text(t, ghSecret)}, Request{Method: MethodGet, Headers: map[string]string{"x-hub-signature-256": ghSig, "x-github-delivery": "d"}, Body: []byte(ghBody)}, at, StatusUnauthorized},
	}
	for name, c := range cases {
		s, req := roundTrip(t, c.s, c.req)
		if v := Check(s, req, c.now); v.Status != c.want {
			t.Errorf("%s: %+v, want %d", name, v, c.want)
		}
	}
	// The positive control of the roll: the old secret inside its 24 h.
	s, req = roundTrip(t, Secrets{Current: text(t, other), Previous: text(t, swSecret), PreviousUntil: at.Add(scheme.RollOverlap)}, swRequest(swID, ts, swSig, swBody))
	if v := Check(s, req, at); v.Status != StatusOK {
		t.Fatalf("the previous secret inside its 24 h: %+v", v)
	}
}
