package moveentry

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
)

// errCut is a stream that stops before its end.
var errCut = fmt.Errorf("%w: the stream stops before its end", ErrEnd)

// Reader reads a move's entries, refusing what the format forbids (the
// package doc lists each refusal). A file's bytes are read through
// [Reader.Body]; Next checks them against their SHA-256 before it reads
// the next entry.
type Reader struct {
	r     *bufio.Reader
	phase Phase
	count uint64
	seen  *Tree // every path sent, and what it was
	head  bool
	sets  bool  // the switch's settings came
	body  *body // the file being read
	ended bool
	err   error
}

// NewReader reads the magic and returns a Reader for the entries.
func NewReader(src io.Reader) (*Reader, error) {
	r := &Reader{r: bufio.NewReaderSize(src, 256<<10), seen: NewTree()}
	m := make([]byte, len(Magic))
	if _, err := io.ReadFull(r.r, m); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ErrFormat
		}
		return nil, err
	}
	if !bytes.Equal(m, []byte(Magic)) {
		return nil, ErrFormat
	}
	return r, nil
}

// Next reads the next entry. After the end it returns io.EOF, and only
// then is the stream whole.
func (r *Reader) Next() (*Entry, error) {
	if r.err != nil {
		return nil, r.err
	}
	e, err := r.next()
	switch {
	case err == io.EOF && r.ended:
		r.err = io.EOF
		return nil, io.EOF
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		err = errCut
	}
	if err != nil {
		r.err = err
		return nil, err
	}
	return e, nil
}

func (r *Reader) next() (*Entry, error) {
	if r.body != nil {
		if _, err := io.Copy(io.Discard, r.body); err != nil {
			return nil, err
		}
		r.body = nil
	}
	k, err := r.r.ReadByte()
	if err != nil {
		if r.ended && errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, err
	}
	if r.ended {
		return nil, fmt.Errorf("%w: data after the end", ErrEnd)
	}
	if r.count++; r.count > MaxEntries {
		return nil, fmt.Errorf("%w: more than %d entries", ErrOrder, MaxEntries)
	}
	kind := Kind(k)
	if !r.head && kind != KindHead {
		return nil, fmt.Errorf("%w: the head must come first", ErrOrder)
	}
	e := &Entry{Kind: kind, Phase: r.phase}
	switch kind {
	case KindHead:
		return r.readHead(e)
	case KindPhase:
		return r.readPhase(e)
	case KindSettings:
		return r.readSettings(e)
	case KindDir, KindFile, KindLink:
		return r.readPath(e)
	case KindEnd:
		n, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		if r.phase != PhaseSwitch || !r.sets {
			return nil, fmt.Errorf("%w: an end before the switch", ErrOrder)
		}
		if n != r.count-1 {
			return nil, fmt.Errorf("%w: it counts %d entries, %d came", ErrEnd, n, r.count-1)
		}
		r.ended = true
		return e, nil
	case 'k':
		return nil, fmt.Errorf("%w: a hard link, which a move carries only as a regular file", ErrEntry)
	default:
		return nil, fmt.Errorf("%w: kind %q", ErrEntry, k)
	}
}

func (r *Reader) readHead(e *Entry) (*Entry, error) {
	if r.head {
		return nil, fmt.Errorf("%w: a second head", ErrOrder)
	}
	b, err := r.bytes(MaxHead)
	if err != nil {
		return nil, err
	}
	var h Head
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&h); err != nil || d.More() {
		return nil, fmt.Errorf("%w: its head is not this format's", ErrFormat)
	}
	r.head, e.Head = true, &h
	return e, nil
}

func (r *Reader) readPhase(e *Entry) (*Entry, error) {
	p, err := r.r.ReadByte()
	if err != nil {
		return nil, err
	}
	switch {
	case Phase(p) == PhaseCopy && r.phase == PhaseNone, Phase(p) == PhaseSwitch && r.phase == PhaseCopy:
	default:
		return nil, fmt.Errorf("%w: phase %q after %q", ErrOrder, p, r.phase)
	}
	r.phase = Phase(p)
	e.Phase = r.phase
	return e, nil
}

func (r *Reader) readSettings(e *Entry) (*Entry, error) {
	if r.phase != PhaseSwitch || r.sets || len(r.seen.In(PhaseSwitch)) > 0 {
		return nil, fmt.Errorf("%w: settings come first in the switch, once", ErrOrder)
	}
	var s Settings
	var err error
	for _, dst := range []*[]byte{&s.Agent, &s.Sandbox, &s.Secrets, &s.Buckets} {
		if *dst, err = r.bytes(MaxSettings); err != nil {
			return nil, err
		}
	}
	r.sets, e.Settings = true, &s
	return e, nil
}

func (r *Reader) readPath(e *Entry) (*Entry, error) {
	if r.phase == PhaseNone || r.phase == PhaseSwitch && !r.sets {
		return nil, fmt.Errorf("%w: a path before its phase's start", ErrOrder)
	}
	b, err := r.bytes(MaxPath)
	if err != nil {
		return nil, err
	}
	e.Path = string(b)
	if _, err := r.seen.Add(r.phase, e.Kind, e.Path); err != nil {
		return nil, err
	}
	switch e.Kind {
	case KindDir:
		if e.Mode, err = r.mode(); err != nil {
			return nil, err
		}
	case KindLink:
		t, err := r.bytes(MaxPath)
		if err != nil {
			return nil, err
		}
		if len(t) == 0 || bytes.IndexByte(t, 0) >= 0 {
			return nil, fmt.Errorf("%w: the link %s has no target or a NUL in it", ErrPath, quote(e.Path))
		}
		e.Target = string(t)
	case KindFile:
		if e.Mode, err = r.mode(); err != nil {
			return nil, err
		}
		n, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		if n > MaxFileSize {
			return nil, fmt.Errorf("%w: a file of %d bytes", ErrSize, n)
		}
		e.Size = int64(n)
		r.body = &body{r: r.r, left: e.Size, h: sha256.New(), path: e.Path}
	}
	return e, nil
}

// Body reads the bytes of the file Next returned last. Its Read returns
// io.EOF only after the bytes matched their SHA-256.
func (r *Reader) Body() io.Reader {
	if r.body == nil {
		return bytes.NewReader(nil)
	}
	return r.body
}

// mode reads a mode, keeping its permission bits only.
func (r *Reader) mode() (uint32, error) {
	m, err := r.uvarint()
	return uint32(m & 0o777), err
}

func (r *Reader) uvarint() (uint64, error) {
	v, err := binary.ReadUvarint(r.r)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, fmt.Errorf("%w: a number that doesn't fit", ErrSize)
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return v, err
}

func (r *Reader) bytes(max int) ([]byte, error) {
	n, err := r.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(max) {
		return nil, fmt.Errorf("%w: %d bytes where at most %d fit", ErrSize, n, max)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r.r, b)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return b, err
}

// body is a file's bytes, checked against their SHA-256 at their end.
type body struct {
	r    *bufio.Reader
	left int64
	h    hash.Hash
	path string
	done bool
	err  error
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 {
		b.err = b.check()
		return 0, b.err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.h.Write(p[:n])
	b.left -= int64(n)
	if errors.Is(err, io.EOF) {
		err = errCut
	}
	if err != nil {
		b.err = err
	}
	return n, err
}

func (b *body) check() error {
	var sum [sha256.Size]byte
	if _, err := io.ReadFull(b.r, sum[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errCut
		}
		return err
	}
	if !bytes.Equal(sum[:], b.h.Sum(nil)) {
		return fmt.Errorf("%w: %s", ErrHash, quote(b.path))
	}
	return io.EOF
}
