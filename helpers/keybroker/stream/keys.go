package stream

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"

	"lnk.dev/lnk/internal/secret"
)

// Text forms of keys: a prefix naming what it is, then unpadded base64url
// of the raw 32 bytes.
const (
	PublicPrefix  = "lnk-stream-pub-"
	PrivatePrefix = "lnk-stream-key-"
)

var b64 = base64.RawURLEncoding

// ErrBadKey is returned for a key that is not one of this package's.
var ErrBadKey = errors.New("stream: not a stream key (lnk-stream-pub-… or lnk-stream-key-…)")

// PublicKey is a receiver's public key.
type PublicKey struct{ k kem.PublicKey }

// PrivateKey is a receiver's private key. It never prints.
type PrivateKey struct{ k kem.PrivateKey }

// NewKeyPair makes a fresh per-transfer key pair.
func NewKeyPair() (*PublicKey, *PrivateKey, error) {
	pk, sk, err := scheme().GenerateKeyPair()
	if err != nil {
		return nil, nil, fmt.Errorf("stream: making a key pair: %w", err)
	}
	return &PublicKey{pk}, &PrivateKey{sk}, nil
}

// scheme is the suite's KEM.
func scheme() kem.Scheme { return hpke.KEM_X25519_HKDF_SHA256.Scheme() }

// String is the public key's text form.
func (p *PublicKey) String() string {
	b, _ := p.k.MarshalBinary()
	return PublicPrefix + b64.EncodeToString(b)
}

// ParsePublicKey reads a public key's text form.
func ParsePublicKey(s string) (*PublicKey, error) {
	raw, ok := strings.CutPrefix(strings.TrimSpace(s), PublicPrefix)
	if !ok {
		return nil, ErrBadKey
	}
	b, err := b64.DecodeString(raw)
	if err != nil || len(b) != scheme().PublicKeySize() {
		return nil, ErrBadKey
	}
	k, err := scheme().UnmarshalBinaryPublicKey(b)
	if err != nil {
		return nil, ErrBadKey
	}
	return &PublicKey{k}, nil
}

// Public is the private key's public half.
func (p *PrivateKey) Public() *PublicKey { return &PublicKey{p.k.Public()} }

// Text returns the private key's text form as a secret.
func (p *PrivateKey) Text() (*secret.Value, error) {
	b, err := p.k.MarshalBinary()
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(PrivatePrefix)+b64.EncodedLen(len(b)))
	copy(out, PrivatePrefix)
	b64.Encode(out[len(PrivatePrefix):], b)
	clear(b)
	return secret.New(out)
}

// ParsePrivateKey reads a private key's text form. The caller zeroes text.
func ParsePrivateKey(text []byte) (*PrivateKey, error) {
	s := strings.TrimSpace(string(text))
	raw, ok := strings.CutPrefix(s, PrivatePrefix)
	if !ok {
		return nil, ErrBadKey
	}
	b, err := b64.DecodeString(raw)
	if err != nil || len(b) != scheme().PrivateKeySize() {
		return nil, ErrBadKey
	}
	defer clear(b)
	k, err := scheme().UnmarshalBinaryPrivateKey(b)
	if err != nil {
		return nil, ErrBadKey
	}
	return &PrivateKey{k}, nil
}

// String never shows the key.
func (p *PrivateKey) String() string { return secret.Redacted }

// GoString never shows the key.
func (p *PrivateKey) GoString() string { return secret.Redacted }
