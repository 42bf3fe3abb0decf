package moveentry

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// Writer writes a move's entries. It checks each path as a Reader would,
// so a sender never writes what a receiver must refuse.
type Writer struct {
	w     *bufio.Writer
	phase Phase
	count uint64
	err   error
	buf   []byte // a file's copy buffer
}

// NewWriter writes the format's magic and the head.
func NewWriter(dst io.Writer, h Head) (*Writer, error) {
	w := &Writer{w: bufio.NewWriterSize(dst, 256<<10)}
	w.w.WriteString(Magic)
	head, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	w.kind(KindHead)
	w.bytes(head)
	return w, w.err
}

// Phase starts phase p.
func (w *Writer) Phase(p Phase) error {
	w.kind(KindPhase)
	w.w.WriteByte(byte(p))
	w.phase = p
	return w.err
}

// Settings writes the switch's settings.
func (w *Writer) Settings(s Settings) error {
	w.kind(KindSettings)
	w.bytes(s.Agent)
	w.bytes(s.Sandbox)
	w.bytes(s.Secrets)
	w.bytes(s.Buckets)
	return w.err
}

// Dir writes a folder.
func (w *Writer) Dir(path string, mode uint32) error {
	if _, err := CheckPath(w.phase, KindDir, path); err != nil {
		return err
	}
	w.kind(KindDir)
	w.bytes([]byte(path))
	w.uvarint(uint64(mode & 0o777))
	return w.err
}

// Link writes a link, carried as it is.
func (w *Writer) Link(path, target string) error {
	if _, err := CheckPath(w.phase, KindLink, path); err != nil {
		return err
	}
	if target == "" || len(target) > MaxPath {
		return fmt.Errorf("%w: a link's target of %d bytes", ErrSize, len(target))
	}
	w.kind(KindLink)
	w.bytes([]byte(path))
	w.bytes([]byte(target))
	return w.err
}

// File writes a file of size bytes read from r, then the SHA-256 of the
// bytes as sent. r giving fewer bytes than size is an error, and the
// stream is then not to be ended.
func (w *Writer) File(path string, mode uint32, size int64, r io.Reader) error {
	if _, err := CheckPath(w.phase, KindFile, path); err != nil {
		return err
	}
	if size < 0 || size > MaxFileSize {
		return fmt.Errorf("%w: a file of %d bytes", ErrSize, size)
	}
	w.kind(KindFile)
	w.bytes([]byte(path))
	w.uvarint(uint64(mode & 0o777))
	w.uvarint(uint64(size))
	if w.err != nil {
		return w.err
	}
	h := sha256.New()
	if w.buf == nil {
		w.buf = make([]byte, 1<<20)
	}
	n, err := io.CopyBuffer(io.MultiWriter(w.w, h), io.LimitReader(r, size), w.buf)
	if err != nil {
		w.err = err
		return err
	}
	if n != size {
		w.err = fmt.Errorf("%s: %d bytes read of %d: it changed while sent", path, n, size)
		return w.err
	}
	w.w.Write(h.Sum(nil))
	return w.err
}

// End writes the end, with the count of entries before it, and flushes.
func (w *Writer) End() error {
	if w.err != nil {
		return w.err
	}
	n := w.count
	w.kind(KindEnd)
	w.uvarint(n)
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

func (w *Writer) kind(k Kind) {
	if w.err != nil {
		return
	}
	w.count++
	w.err = w.w.WriteByte(byte(k))
}

func (w *Writer) uvarint(v uint64) {
	if w.err != nil {
		return
	}
	var b [binary.MaxVarintLen64]byte
	_, w.err = w.w.Write(b[:binary.PutUvarint(b[:], v)])
}

func (w *Writer) bytes(b []byte) {
	w.uvarint(uint64(len(b)))
	if w.err == nil {
		_, w.err = w.w.Write(b)
	}
}
