package stream

import (
	"bytes"
	"errors"
	"testing"
)

// TestEveryRefusal tampers with a sealed stream of three full records and
// a short final one in each way the format refuses, and checks the
// refusal and that nothing past the damage was given out.
func TestEveryRefusal(t *testing.T) {
	pub, priv := keyPair(t)
	_, other := keyPair(t)
	plain := random(3*RecordSize + 1000)
	sealed := seal(t, pub, plain)
	hdr := sealed[:HeaderSize]
	rec := func(i int) []byte { // record i's ciphertext
		start := HeaderSize + i*recordCTSize
		return sealed[start:min(start+recordCTSize, len(sealed))]
	}
	join := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	flip := func(b []byte, at int) []byte {
		c := bytes.Clone(b)
		c[at] ^= 0x01
		return c
	}
	// A stream whose final record is full, for trailing data after it.
	full := random(2 * RecordSize)
	sealedFull := seal(t, pub, full)

	cases := []struct {
		name   string
		key    *PrivateKey
		stream []byte
		want   error
	}{
		{"wrong recipient", other, sealed, ErrWrongRecipient},
		{"encapsulated key changed", priv, flip(sealed, len(Magic)+3), ErrWrongRecipient},
		{"sealed stream key changed", priv, flip(sealed, HeaderSize-1), ErrWrongRecipient},
		{"another format", priv, flip(sealed, 0), ErrFormat},
		{"header cut short", priv, sealed[:HeaderSize-1], ErrFormat},
		{"empty input", priv, nil, ErrFormat},
		{"record modified", priv, join(hdr, rec(0), flip(rec(1), 100), rec(2), rec(3)), ErrDamaged},
		{"tag modified", priv, join(hdr, rec(0), flip(rec(1), recordCTSize-1), rec(2), rec(3)), ErrDamaged},
		{"final record modified", priv, join(hdr, rec(0), rec(1), rec(2), flip(rec(3), 5)), ErrDamaged},
		{"records reordered", priv, join(hdr, rec(1), rec(0), rec(2), rec(3)), ErrDamaged},
		{"record dropped", priv, join(hdr, rec(0), rec(2), rec(3)), ErrDamaged},
		{"record duplicated", priv, join(hdr, rec(0), rec(1), rec(1), rec(2), rec(3)), ErrDamaged},
		{"final record duplicated", priv, join(hdr, rec(0), rec(1), rec(2), rec(3), rec(3)), ErrDamaged},
		{"final record missing", priv, join(hdr, rec(0), rec(1), rec(2)), ErrTruncated},
		{"no records at all", priv, hdr, ErrTruncated},
		{"cut inside a record", priv, sealed[:HeaderSize+recordCTSize+500], ErrDamaged},
		{"cut inside the final record", priv, sealed[:len(sealed)-1], ErrDamaged},
		{"cut to a few bytes", priv, sealed[:HeaderSize+5], ErrTruncated},
		{"trailing data after a full final record", priv, append(bytes.Clone(sealedFull), 0), ErrTrailing},
		{"trailing data after a short final record", priv, append(bytes.Clone(sealed), 0), ErrDamaged},
		{"an empty final record after data", priv, emptyFinalAfterData(t, pub, plain[:3*RecordSize]), ErrDamaged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := open(c.key, c.stream)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if !bytes.HasPrefix(plain, got) && !bytes.HasPrefix(full, got) {
				t.Fatal("gave out plaintext that was never sealed")
			}
			if _, err := openWriteTo(c.key, c.stream); !errors.Is(err, c.want) {
				t.Fatalf("through WriteTo: got %v, want %v", err, c.want)
			}
			got, err = openBig(c.key, c.stream)
			if !errors.Is(err, c.want) {
				t.Fatalf("a MiB at a time: got %v, want %v", err, c.want)
			}
			if !bytes.HasPrefix(plain, got) && !bytes.HasPrefix(full, got) {
				t.Fatal("a MiB at a time: gave out plaintext that was never sealed")
			}
		})
	}
}

// emptyFinalAfterData is a stream no Writer makes: three full records
// and then an empty final one, sealed under the stream's own key.
func emptyFinalAfterData(t *testing.T, to *PublicKey, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, to)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.flush(false); err != nil { // the third record, as not final
		t.Fatal(err)
	}
	if err := w.Close(); err != nil { // an empty final record
		t.Fatal(err)
	}
	return out.Bytes()
}
