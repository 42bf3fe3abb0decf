package stream

import (
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/chacha20poly1305"
)

// Writer seals what is written to it. Close writes the final record; a
// stream not closed is refused by every reader as truncated.
type Writer struct {
	dst    io.Writer
	aead   cipher.AEAD
	buf    []byte // plaintext of the record being filled, then its ciphertext
	out    []byte // ciphertext of the records sealed straight from Write's p
	n      int    // plaintext bytes in buf
	index  uint64
	nonce  [chacha20poly1305.NonceSize]byte
	err    error
	closed bool
}

// NewWriter writes the header sealing a fresh stream key to to, and
// returns a Writer for the records.
func NewWriter(dst io.Writer, to *PublicKey) (*Writer, error) {
	var key [chacha20poly1305.KeySize]byte
	rand.Read(key[:])
	defer clear(key[:])
	sender, err := suite.NewSender(to.k, hpkeInfo)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	enc, sealer, err := sender.Setup(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("stream: sealing the stream key: %w", err)
	}
	sealedKey, err := sealer.Seal(key[:], []byte(Magic))
	if err != nil {
		return nil, fmt.Errorf("stream: sealing the stream key: %w", err)
	}
	hdr := make([]byte, 0, HeaderSize)
	hdr = append(append(append(hdr, Magic...), enc...), sealedKey...)
	if len(hdr) != HeaderSize {
		return nil, errors.New("stream: header of unexpected size")
	}
	if _, err := dst.Write(hdr); err != nil {
		return nil, err
	}
	aead, err := chacha20poly1305.New(key[:])
	if err != nil {
		return nil, err
	}
	return &Writer{dst: dst, aead: aead, buf: make([]byte, recordCTSize)}, nil
}

// Write seals p into records, writing each full record once more data
// follows it (so the final record is known at Close).
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, errors.New("stream: write after close")
	}
	total := 0
	for len(p) > 0 {
		if w.n == RecordSize {
			if err := w.flush(false); err != nil {
				return total, err
			}
		}
		if w.n == 0 && len(p) > RecordSize {
			// Whole records with more after them: sealed straight from
			// p, a batch at a time.
			m := min((len(p)-1)/RecordSize, batchRecords)
			if err := w.sealBatch(p[:m*RecordSize]); err != nil {
				return total, err
			}
			p = p[m*RecordSize:]
			total += m * RecordSize
			continue
		}
		k := copy(w.buf[w.n:RecordSize], p)
		w.n += k
		p = p[k:]
		total += k
	}
	return total, nil
}

// Close writes the final record. It does not close the destination.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return nil
	}
	w.closed = true
	return w.flush(true)
}

// batchRecords is how many whole records one batch seals: they are
// written to the destination in one Write.
const batchRecords = 16

// sealBatch seals plain, whole records none of which is the final one,
// into w.out and writes them in one Write: one allocation for the
// Writer's life, no copy of the plaintext, one nonce array reused. It
// seals on the caller's goroutine: split among goroutines, a batch waits
// for its slowest part, which on a loaded machine is slower than one.
func (w *Writer) sealBatch(plain []byte) error {
	m := len(plain) / RecordSize
	if len(w.out) < m*recordCTSize {
		w.out = make([]byte, batchRecords*recordCTSize)
	}
	for i := range m {
		nonce(&w.nonce, w.index+uint64(i), false)
		w.aead.Seal(w.out[i*recordCTSize:i*recordCTSize], w.nonce[:], plain[i*RecordSize:(i+1)*RecordSize], nil)
	}
	if _, err := w.dst.Write(w.out[:m*recordCTSize]); err != nil {
		w.err = err
		return err
	}
	w.index += uint64(m)
	return nil
}

func (w *Writer) flush(last bool) error {
	nonce(&w.nonce, w.index, last)
	ct := w.aead.Seal(w.buf[:0], w.nonce[:], w.buf[:w.n], nil)
	if _, err := w.dst.Write(ct); err != nil {
		w.err = err
		return err
	}
	w.n = 0
	w.index++
	return nil
}
