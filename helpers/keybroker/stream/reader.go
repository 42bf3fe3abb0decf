package stream

import (
	"bytes"
	"crypto/cipher"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/chacha20poly1305"
)

// Reader opens a sealed stream, giving out each record's plaintext only
// after it authenticated. Read returns io.EOF only after the final record
// authenticated and nothing followed it.
type Reader struct {
	src   io.Reader
	aead  cipher.AEAD
	buf   []byte // ciphertext read ahead: up to one record and one byte
	have  int    // bytes of buf that hold ciphertext
	pt    []byte // room for one record's plaintext
	plain []byte // authenticated plaintext not yet read
	index uint64
	nonce [chacha20poly1305.NonceSize]byte
	done  bool
	err   error
}

// NewReader reads the header, opens the stream key with key, and returns
// a Reader for the records.
func NewReader(src io.Reader, key *PrivateKey) (*Reader, error) {
	hdr := make([]byte, HeaderSize)
	if _, err := io.ReadFull(src, hdr); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ErrFormat
		}
		return nil, err
	}
	if !bytes.Equal(hdr[:len(Magic)], []byte(Magic)) {
		return nil, ErrFormat
	}
	enc := hdr[len(Magic) : len(Magic)+encSize]
	receiver, err := suite.NewReceiver(key.k, hpkeInfo)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	opener, err := receiver.Setup(enc)
	if err != nil {
		return nil, ErrWrongRecipient
	}
	streamKey, err := opener.Open(hdr[len(Magic)+encSize:], []byte(Magic))
	if err != nil {
		return nil, ErrWrongRecipient
	}
	defer clear(streamKey)
	aead, err := chacha20poly1305.New(streamKey)
	if err != nil {
		return nil, err
	}
	return &Reader{src: src, aead: aead, buf: make([]byte, recordCTSize+1), pt: make([]byte, RecordSize)}, nil
}

// Read gives out authenticated plaintext.
func (r *Reader) Read(p []byte) (int, error) {
	for len(r.plain) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.done {
			return 0, io.EOF
		}
		if len(p) >= RecordSize {
			// Room for a whole record: open it straight into p.
			r.err = r.next(p)
			if n := len(r.plain); r.err == nil && n > 0 {
				r.plain = nil
				return n, nil
			}
			continue
		}
		r.err = r.next(r.pt)
	}
	n := copy(p, r.plain)
	r.plain = r.plain[n:]
	return n, nil
}

// next reads and opens one record into dst (at least RecordSize long). A
// full record followed by at least one more byte is not the final one;
// anything else is.
func (r *Reader) next(dst []byte) error {
	n, err := io.ReadFull(r.src, r.buf[r.have:])
	r.have += n
	switch {
	case err == nil:
		// A full record and a byte after it: not the final record.
		if err := r.open(dst, r.buf[:recordCTSize], false); err != nil {
			// A full final record followed by more data.
			if r.tryLast(r.buf[:recordCTSize]) {
				return ErrTrailing
			}
			return err
		}
		r.buf[0] = r.buf[recordCTSize]
		r.have = 1
		return nil
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		ct := r.buf[:r.have]
		if len(ct) < chacha20poly1305.Overhead {
			return ErrTruncated
		}
		if err := r.open(dst, ct, true); err != nil {
			if len(ct) == recordCTSize && r.tryNotLast(ct) {
				return ErrTruncated // a whole record, but not the final one
			}
			return err
		}
		if len(r.plain) == 0 && r.index > 1 {
			return ErrDamaged // only an empty stream ends with an empty record
		}
		r.done = true
		r.have = 0
		return nil
	default:
		return err
	}
}

func (r *Reader) open(dst, ct []byte, last bool) error {
	nonce(&r.nonce, r.index, last)
	// Never in place: a failed Open zeroes its output, and ct is
	// still needed to tell why it failed.
	pt, err := r.aead.Open(dst[:0], r.nonce[:], ct, nil)
	if err != nil {
		return ErrDamaged
	}
	r.plain = pt
	r.index++
	return nil
}

// tryLast and tryNotLast tell why a record failed.
func (r *Reader) tryLast(ct []byte) bool    { return r.try(ct, true) }
func (r *Reader) tryNotLast(ct []byte) bool { return r.try(ct, false) }

func (r *Reader) try(ct []byte, last bool) bool {
	var n [chacha20poly1305.NonceSize]byte
	nonce(&n, r.index, last)
	_, err := r.aead.Open(r.pt[:0], n[:], ct, nil)
	return err == nil
}

// WriteTo writes the authenticated plaintext to w record by record,
// saving io.Copy a copy of each.
func (r *Reader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		if len(r.plain) > 0 {
			n, err := w.Write(r.plain)
			total += int64(n)
			r.plain = r.plain[n:]
			if err != nil {
				return total, err
			}
			continue
		}
		if r.err != nil {
			return total, r.err
		}
		if r.done {
			return total, nil
		}
		r.err = r.next(r.pt)
	}
}
