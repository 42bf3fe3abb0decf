package stream

import (
	"bytes"
	"io"
	"testing"
)

// fuzzKey is a fixed receiver key, so seeds sealed to it stay valid.
func fuzzKey() *PrivateKey {
	_, sk := scheme().DeriveKeyPair(bytes.Repeat([]byte("lnk fuzz"), 4))
	return &PrivateKey{sk}
}

// FuzzReader opens arbitrary bytes as a stream sealed to a fixed key: it
// must never panic, never give out more than it read, and either refuse
// or end with io.EOF.
func FuzzReader(f *testing.F) {
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), fuzzKey())
		if err != nil {
			return
		}
		out, err := io.ReadAll(r)
		if len(out) > len(data) {
			t.Fatalf("gave out %d bytes from %d", len(out), len(data))
		}
		if err == nil && len(data) < HeaderSize+16 {
			t.Fatalf("accepted a stream of %d bytes", len(data))
		}
	})
}
