package stream

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"testing"
)

func keyPair(t testing.TB) (*PublicKey, *PrivateKey) {
	t.Helper()
	pub, priv, err := NewKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

func seal(t testing.TB, to *PublicKey, plain []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, to)
	if err != nil {
		t.Fatal(err)
	}
	// Odd-sized writes, so records are filled across Write calls.
	for p := plain; len(p) > 0; {
		n := min(len(p), 7777)
		if _, err := w.Write(p[:n]); err != nil {
			t.Fatal(err)
		}
		p = p[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func open(key *PrivateKey, sealed []byte) ([]byte, error) {
	r, err := NewReader(bytes.NewReader(sealed), key)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// sealWhole seals plain in one Write, the path that seals whole records
// straight from the caller's slice.
func sealWhole(t testing.TB, to *PublicKey, plain []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(plain); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// openBig opens with reads of 1 MiB, the path that opens whole records
// straight into the caller's slice.
func openBig(key *PrivateKey, sealed []byte) ([]byte, error) {
	r, err := NewReader(bytes.NewReader(sealed), key)
	if err != nil {
		return nil, err
	}
	var out []byte
	buf := make([]byte, 1<<20)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// openWriteTo opens through Reader.WriteTo, the path io.Copy takes.
func openWriteTo(key *PrivateKey, sealed []byte) ([]byte, error) {
	r, err := NewReader(bytes.NewReader(sealed), key)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	_, err = r.WriteTo(&out)
	return out.Bytes(), err
}

func random(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func TestRoundTrip(t *testing.T) {
	pub, priv := keyPair(t)
	for _, n := range []int{0, 1, 100, RecordSize - 1, RecordSize, RecordSize + 1, 3 * RecordSize, 3*RecordSize + 12345} {
		plain := random(n)
		sealed := seal(t, pub, plain)
		records := max(1, (n+RecordSize-1)/RecordSize)
		if want := HeaderSize + n + 16*records; len(sealed) != want {
			t.Errorf("%d bytes sealed to %d, want %d", n, len(sealed), want)
		}
		got, err := open(priv, sealed)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if !bytes.Equal(got, plain) {
			t.Fatalf("%d bytes: opened something else", n)
		}
		if got, err := openWriteTo(priv, sealed); err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%d bytes through WriteTo: %v", n, err)
		}
		if got, err := openBig(priv, sealed); err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%d bytes read a MiB at a time: %v", n, err)
		}
		whole := sealWhole(t, pub, plain)
		if len(whole) != len(sealed) {
			t.Fatalf("%d bytes sealed in one Write to %d bytes, not %d", n, len(whole), len(sealed))
		}
		if got, err := openBig(priv, whole); err != nil || !bytes.Equal(got, plain) {
			t.Fatalf("%d bytes sealed in one Write: %v", n, err)
		}
	}
}

func TestKeysRoundTripAsText(t *testing.T) {
	pub, priv := keyPair(t)
	text, err := priv.Text()
	if err != nil {
		t.Fatal(err)
	}
	defer text.Destroy()
	priv2, err := ParsePrivateKey(text.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	pub2, err := ParsePublicKey(pub.String())
	if err != nil {
		t.Fatal(err)
	}
	if priv2.Public().String() != pub.String() || pub2.String() != pub.String() {
		t.Fatal("keys changed through their text form")
	}
	if got, err := open(priv2, seal(t, pub2, []byte("hello"))); err != nil || string(got) != "hello" {
		t.Fatalf("parsed keys don't open: %q %v", got, err)
	}
	for _, bad := range []string{"", "lnk-stream-pub-", "lnk-stream-pub-AAAA", "age1xyz", pub.String() + "AA", PrivatePrefix + "x"} {
		if _, err := ParsePublicKey(bad); !errors.Is(err, ErrBadKey) {
			t.Errorf("public key %q: %v", bad, err)
		}
		if _, err := ParsePrivateKey([]byte(bad)); !errors.Is(err, ErrBadKey) {
			t.Errorf("private key %q: %v", bad, err)
		}
	}
	if s := priv.String(); s != "[secret]" {
		t.Errorf("private key prints as %q", s)
	}
}

// TestSealingToALowOrderKeyFails: RFC 9180 requires DHKEM to refuse an
// all-zero shared secret, which every low-order X25519 point gives.
func TestSealingToALowOrderKeyFails(t *testing.T) {
	zero := PublicPrefix + b64.EncodeToString(make([]byte, 32))
	pub, err := ParsePublicKey(zero)
	if err != nil {
		return // refused at parsing: as good
	}
	if _, err := NewWriter(io.Discard, pub); err == nil {
		t.Fatal("sealed a stream to a low-order key")
	}
}
