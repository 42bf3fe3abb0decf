// Package stream seals a byte stream to a receiver's public key, for
// moves and backups: HPKE (RFC 9180; DHKEM(X25519, HKDF-SHA256),
// HKDF-SHA256, ChaCha20-Poly1305, base mode) seals a fresh 32-byte stream
// key to the receiver's per-transfer key, and the stream itself is records
// of at most 64 KiB of plaintext, each sealed with ChaCha20-Poly1305 under
// that key with a counter nonce whose last byte flags the final record.
//
// # Format
//
//	"lnk-stream/v1\n"                 14 bytes
//	enc                               32 bytes, HPKE's encapsulated key
//	HPKE seal(stream key, aad=magic)  48 bytes
//	records                           each 64 KiB + 16 but the final one,
//	                                  which is 0..64 KiB + 16
//
// A record's nonce is its 11-byte big-endian index and a last-record byte
// (1 for the final record, else 0); every record but the final one is
// full, and the final one is empty only when it is the first. This is
// age's STREAM construction, with HPKE in place of age's header.
//
// # Security
//
// It holds a stream key for one stream at a time, and a receiver's
// private key only while opening. It trusts nothing it reads. A [Reader]
// gives out a record's plaintext only after that record authenticated,
// and refuses: a stream not sealed to its key ([ErrWrongRecipient]); a
// header of another format ([ErrFormat]); a modified, reordered, dropped
// duplicated or cut record ([ErrDamaged]); a stream ending without its
// final record ([ErrTruncated]); and data after the final
// record ([ErrTrailing]). A stream is whole only when Read returns io.EOF:
// a caller puts nothing in place before that.
package stream

import (
	"errors"

	"github.com/cloudflare/circl/hpke"
	"golang.org/x/crypto/chacha20poly1305"
)

// Sizes of the format.
const (
	Magic        = "lnk-stream/v1\n"
	RecordSize   = 64 << 10 // plaintext bytes in every record but the final one
	encSize      = 32
	sealedKeyLen = chacha20poly1305.KeySize + chacha20poly1305.Overhead
	HeaderSize   = len(Magic) + encSize + sealedKeyLen
	recordCTSize = RecordSize + chacha20poly1305.Overhead
)

// hpkeInfo binds HPKE's key schedule to this use.
var hpkeInfo = []byte("lnk sealed stream v1")

var suite = hpke.NewSuite(hpke.KEM_X25519_HKDF_SHA256, hpke.KDF_HKDF_SHA256, hpke.AEAD_ChaCha20Poly1305)

// The refusals. Each is one line saying why.
var (
	ErrFormat         = errors.New("stream: not a sealed stream of this format (lnk-stream/v1)")
	ErrWrongRecipient = errors.New("stream: not sealed to this key, or its header was changed")
	ErrDamaged        = errors.New("stream: a record was modified, reordered, dropped, duplicated or cut")
	ErrTruncated      = errors.New("stream: cut short: its final record is missing")
	ErrTrailing       = errors.New("stream: data follows the final record")
)

// nonce returns the nonce of record i.
func nonce(n *[chacha20poly1305.NonceSize]byte, i uint64, last bool) {
	clear(n[:])
	for k := 0; k < 8; k++ {
		n[10-k] = byte(i >> (8 * k))
	}
	if last {
		n[11] = 1
	}
}
