package webhook

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

// TestIDOutsideTheCharsetRefused: the signed text is id.timestamp.body,
// so a post of id "a" at timestamp t with body "<t2>.x" signs the same
// bytes as one of id "a.<t>" at t2 with body "x": a signature taken from
// the one would verify the other. An id holding a . (or any byte but
// A-Z, a-z, 0-9, _ and -) is refused with ErrBadID even when rightly
// signed; the control: the same post under a plain id verifies.
func TestIDOutsideTheCharsetRefused(t *testing.T) {
	key, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	t1, t2 := now.Unix(), now.Unix()-60
	// The sender signs id "a" at t1 over body "<t2>.x" ...
	sig := Sign(key, "a", t1, []byte(strconv.FormatInt(t2, 10)+".x"))
	// ... and an attacker re-cuts it: id "a.<t1>", timestamp t2, body "x".
	forged := Headers{ID: "a." + strconv.FormatInt(t1, 10), Timestamp: strconv.FormatInt(t2, 10), Signature: sig}
	if err := Verify(Keys{Current: key}, forged, []byte("x"), now); !errors.Is(err, ErrBadID) {
		t.Fatalf("the re-cut post: %v, want ErrBadID", err)
	}
	for _, id := range []string{"a b", "a/b", "a:b", "é", "a\x00"} {
		h := Headers{ID: id, Timestamp: strconv.FormatInt(t1, 10), Signature: Sign(key, id, t1, []byte("x"))}
		if err := Verify(Keys{Current: key}, h, []byte("x"), now); !errors.Is(err, ErrBadID) {
			t.Errorf("id %q: %v, want ErrBadID", id, err)
		}
	}
	for _, id := range []string{"a", "msg_p5jXN8AQM9LWM0D4loKWxJek", "get-1-A_z"} {
		h := Headers{ID: id, Timestamp: strconv.FormatInt(t1, 10), Signature: Sign(key, id, t1, []byte("x"))}
		if err := Verify(Keys{Current: key}, h, []byte("x"), now); err != nil {
			t.Errorf("the control, id %q: %v", id, err)
		}
	}
}
