package stream

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"testing"

	"github.com/c2sp/wycheproof"
	"github.com/cloudflare/circl/dh/x25519"
	"github.com/cloudflare/circl/hpke"
	"golang.org/x/crypto/chacha20poly1305"
)

type hexBytes []byte

func (h *hexBytes) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	d, err := hex.DecodeString(s)
	*h = d
	return err
}

// TestRFC9180Vectors runs the RFC's base-mode vectors for this package's
// suite (DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, ChaCha20-Poly1305),
// taken from circl's testdata, through the same suite value the stream
// uses: the receiver key derived from ikmR, enc from ikmE, and each of
// the 257 sealed messages in order.
func TestRFC9180Vectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/rfc9180-base-x25519-sha256-chacha20poly1305.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		Mode        int
		KemID       int `json:"kem_id"`
		KdfID       int `json:"kdf_id"`
		AeadID      int `json:"aead_id"`
		Info        hexBytes
		IkmR        hexBytes `json:"ikmR"`
		IkmE        hexBytes `json:"ikmE"`
		PkRm        hexBytes `json:"pkRm"`
		SkRm        hexBytes `json:"skRm"`
		Enc         hexBytes
		Encryptions []struct{ Aad, Ct, Nonce, Pt hexBytes }
	}
	if err := json.Unmarshal(raw, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range vs {
		if v.Mode != 0 || hpke.KEM(v.KemID) != hpke.KEM_X25519_HKDF_SHA256 || hpke.KDF(v.KdfID) != hpke.KDF_HKDF_SHA256 || hpke.AEAD(v.AeadID) != hpke.AEAD_ChaCha20Poly1305 {
			t.Fatalf("vector of another suite: %d %d %d %d", v.Mode, v.KemID, v.KdfID, v.AeadID)
		}
		pk, sk := scheme().DeriveKeyPair(v.IkmR)
		if b, _ := pk.MarshalBinary(); !bytes.Equal(b, v.PkRm) {
			t.Fatalf("derived public key %x, want %x", b, v.PkRm)
		}
		if b, _ := sk.MarshalBinary(); !bytes.Equal(b, v.SkRm) {
			t.Fatal("derived private key differs")
		}
		sender, err := suite.NewSender(pk, v.Info)
		if err != nil {
			t.Fatal(err)
		}
		enc, sealer, err := sender.Setup(bytes.NewReader(v.IkmE))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, v.Enc) {
			t.Fatalf("enc %x, want %x", enc, v.Enc)
		}
		receiver, _ := suite.NewReceiver(sk, v.Info)
		opener, err := receiver.Setup(enc)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range v.Encryptions {
			ct, err := sealer.Seal(e.Pt, e.Aad)
			if err != nil || !bytes.Equal(ct, e.Ct) {
				t.Fatalf("message %d: sealed %x (%v), want %x", i, ct, err, e.Ct)
			}
			pt, err := opener.Open(e.Ct, e.Aad)
			if err != nil || !bytes.Equal(pt, e.Pt) {
				t.Fatalf("message %d: opened %x (%v)", i, pt, err)
			}
		}
		t.Logf("%d messages", len(v.Encryptions))
	}
}

type wycheproofFile struct {
	TestGroups []struct {
		IvSize, KeySize, TagSize int
		Tests                    []struct {
			TcID                       int
			Flags                      []string
			Key, Iv, Aad, Msg, Ct, Tag hexBytes
			Public, Private, Shared    hexBytes
			Result                     string
		}
	}
}

func readWycheproof(t *testing.T, name string) wycheproofFile {
	t.Helper()
	raw, err := fs.ReadFile(wycheproof.TestVectors, name)
	if err != nil {
		t.Fatal(err)
	}
	var f wycheproofFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestWycheproofChaCha20Poly1305 runs Wycheproof's vectors through the
// AEAD the records are sealed with.
func TestWycheproofChaCha20Poly1305(t *testing.T) {
	n := 0
	for _, g := range readWycheproof(t, "chacha20_poly1305_test.json").TestGroups {
		for _, c := range g.Tests {
			if g.IvSize != 96 || g.KeySize != 256 {
				continue // sizes chacha20poly1305.New refuses
			}
			n++
			aead, err := chacha20poly1305.New(c.Key)
			if err != nil {
				t.Fatalf("tc %d: %v", c.TcID, err)
			}
			sealed := append(bytes.Clone([]byte(c.Ct)), c.Tag...)
			pt, err := aead.Open(nil, c.Iv, sealed, c.Aad)
			switch c.Result {
			case "valid":
				if err != nil || !bytes.Equal(pt, c.Msg) {
					t.Errorf("tc %d: valid vector refused: %v", c.TcID, err)
				}
				if got := aead.Seal(nil, c.Iv, c.Msg, c.Aad); !bytes.Equal(got, sealed) {
					t.Errorf("tc %d: sealed differently", c.TcID)
				}
			case "invalid":
				if err == nil {
					t.Errorf("tc %d: invalid vector accepted (%v)", c.TcID, c.Flags)
				}
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d vectors ran", n)
	}
}

// TestWycheproofX25519 runs Wycheproof's vectors through circl's X25519,
// which the KEM uses. A vector whose shared secret is all zero (a
// low-order public key) must be refused, as RFC 9180 requires.
func TestWycheproofX25519(t *testing.T) {
	n := 0
	for _, g := range readWycheproof(t, "x25519_test.json").TestGroups {
		for _, c := range g.Tests {
			n++
			var priv, pub, shared x25519.Key
			copy(priv[:], c.Private)
			copy(pub[:], c.Public)
			ok := x25519.Shared(&shared, &priv, &pub)
			zero := bytes.Equal(c.Shared, make([]byte, 32))
			switch {
			case zero && ok:
				t.Errorf("tc %d: all-zero shared secret accepted", c.TcID)
			case !zero && c.Result != "invalid" && (!ok || !bytes.Equal(shared[:], c.Shared)):
				t.Errorf("tc %d (%s %v): shared %x ok=%v, want %x", c.TcID, c.Result, c.Flags, shared, ok, []byte(c.Shared))
			}
		}
	}
	if n < 100 {
		t.Fatalf("only %d vectors ran", n)
	}
}
