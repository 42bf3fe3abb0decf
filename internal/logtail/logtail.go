// Package logtail reads an agent's log for `lnk agent logs` (security.txt,
// "Its log is out of its reach"): from the offset the last start
// recorded (never a marker the harness could print; in the log's
// previous file where the log was rotated since, the two then read as
// one, NewJoined, and Follow going on in the new file), at most the last
// MaxRead bytes, cleaned by internal/textsafe's Stream (no control
// character, no escape sequence; newlines and tabs kept), as lines of at
// most Piece bytes. Follow reads what is new at most MaxRead at a time
// and shows a line without an end in Piece-sized pieces, so a harness
// printing a burst, binary data or no newline at all never makes it hold
// more than a few MiB.
//
// # Security
//
// Everything in the log is the harness's, so hostile: it is read as
// bytes, never parsed but by the cleaner, and what reaches the owner's
// terminal is only what textsafe lets through. The caller opens the file
// (through no link, a regular file: internal/ownerfile) and holds the
// start offset, which lnk, outside the sandbox, wrote. Holds the file
// and its buffers, nothing else.
package logtail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
	"unicode/utf8"

	"lnk.dev/lnk/internal/textsafe"
)

const (
	// MaxRead is the most read of a log at once: the tail, or one step
	// of Follow.
	MaxRead = 4 << 20
	// Piece is the longest line shown: a longer one is shown in pieces.
	Piece = 64 << 10
	// Lines is how many lines a tail shows.
	Lines = 200
	// chunk is one read within MaxRead.
	chunk = 256 << 10
	// maxStart bounds the start file: a decimal int64 and a newline.
	maxStart = 21
)

// A Start is where the last start began: at Offset in the log or, with
// Prev, at Offset in the log's previous file (<name>.log.1): the log
// was rotated since, and the start's first lines are there.
type Start struct {
	Prev   bool
	Offset int64
}

// prevPrefix begins a start file whose offset is in the previous file.
const prevPrefix = "1:"

// String is the start as its file holds it: the offset in decimal, after
// "1:" with Prev.
func (s Start) String() string {
	n := strconv.FormatInt(s.Offset, 10)
	if s.Prev {
		return prevPrefix + n
	}
	return n
}

// ParseStart reads a <name>.start file: the log's size, in decimal
// bytes, when the last start began, after "1:" where that is in the
// previous file; with an optional final newline.
func ParseStart(b []byte) (Start, error) {
	b = bytes.TrimSuffix(b, []byte("\n"))
	var s Start
	if rest, ok := bytes.CutPrefix(b, []byte(prevPrefix)); ok {
		s.Prev, b = true, rest
	}
	if len(b) == 0 || len(b) > maxStart-1 {
		return Start{}, errors.New("not a decimal offset")
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return Start{}, errors.New("not a decimal offset")
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return Start{}, errors.New("not a decimal offset")
	}
	s.Offset = n
	return s, nil
}

// MaxStartFile is the most bytes a start file may hold.
const MaxStartFile = maxStart + int64(len(prevPrefix))

// Reader reads one log from an offset on.
type Reader struct {
	f       source
	pos     int64
	clean   textsafe.Stream
	line    []byte // the cleaned line so far, shorter than Piece after each call
	buf     []byte // one chunk read
	cleaned []byte // one chunk cleaned
	// Truncated is called when the log is found shorter than what was
	// read: it was cut or replaced, and is read again from its start.
	Truncated func()
	// Rotated, called by Follow each time it has caught up, returns the
	// log's new file where the log was rotated since (the file read so
	// far is then its previous one, written no more), else nil. Follow
	// reads the old file to its end and goes on in the new one (Next).
	Rotated func() (*os.File, error)
}

// New is a Reader of f from the offset start (the last start's).
func New(f *os.File, start int64) *Reader {
	if start < 0 {
		start = 0
	}
	return &Reader{f: file{f}, pos: start, buf: make([]byte, chunk)}
}

// NewJoined is a Reader of prev, the log's previous file, which is no
// longer written, from the offset start in it, and then of f, the log,
// from its beginning: one text across a rotation, a line cut between
// the two read whole.
func NewJoined(prev *os.File, start int64, f *os.File) (*Reader, error) {
	st, err := prev.Stat()
	if err != nil {
		return nil, err
	}
	r := New(prev, start)
	r.f = joined{prev: prev, prevSize: st.Size(), f: f}
	return r, nil
}

// Next goes on reading in f, from its beginning, once the file read so
// far has been read to its end and will grow no more (the log was
// rotated, and f is the log now). A line cut between the two is read
// whole.
func (r *Reader) Next(f *os.File) {
	r.f, r.pos = file{f}, 0
}

// source is what a Reader reads: a file, or two joined.
type source interface {
	ReadAt(p []byte, off int64) (int, error)
	size() (int64, error)
}

type file struct{ *os.File }

func (f file) size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// joined is prev's first prevSize bytes, then f.
type joined struct {
	prev     *os.File
	prevSize int64
	f        *os.File
}

func (j joined) size() (int64, error) {
	n, err := file{j.f}.size()
	return j.prevSize + n, err
}

func (j joined) ReadAt(p []byte, off int64) (int, error) {
	if off < j.prevSize {
		// One file at a time: a read ends where prev does.
		p = p[:min(int64(len(p)), j.prevSize-off)]
		n, err := j.prev.ReadAt(p, off)
		if err == io.EOF && n == len(p) {
			err = nil
		}
		return n, err
	}
	return j.f.ReadAt(p, off-j.prevSize)
}

// Offset is where the next read begins.
func (r *Reader) Offset() int64 { return r.pos }

// size is the log's size now, and resets the reader when the log is
// shorter than where it is.
func (r *Reader) size() (int64, error) {
	size, err := r.f.size()
	if err != nil {
		return 0, err
	}
	if size < r.pos {
		r.pos, r.line, r.clean = 0, r.line[:0], textsafe.Stream{}
		if r.Truncated != nil {
			r.Truncated()
		}
	}
	return size, nil
}

// Tail writes to w the last n lines written since the offset, from at
// most the last MaxRead bytes, and leaves the offset at the end it read.
// Where the window starts after the offset, the cut line before its
// first newline is left out (when the window has one). With final, a
// last line without an end is shown too; without it, it waits for Step.
func (r *Reader) Tail(w io.Writer, n int, final bool) error {
	size, err := r.size()
	if err != nil {
		return err
	}
	from := r.pos
	if size-from > MaxRead {
		from = size - MaxRead
		if nl, err := r.firstNewline(from, size); err != nil {
			return err
		} else if nl >= 0 {
			from = nl + 1
		}
		r.clean = textsafe.Stream{} // what came before the window is not read
	}
	ring := make([][]byte, n)
	count := 0
	keep := func(p []byte) error {
		if n == 0 {
			return nil
		}
		slot := &ring[count%n]
		*slot = append((*slot)[:0], p...)
		count++
		return nil
	}
	if err := r.read(from, size, keep); err != nil {
		return err
	}
	if final {
		r.line = r.clean.Flush(r.line)
		if len(r.line) > 0 {
			keep(r.line)
			r.line = r.line[:0]
		}
	}
	start := 0
	if count > n {
		start = count - n
	}
	for i := start; i < count; i++ {
		if err := writeLine(w, ring[i%n]); err != nil {
			return err
		}
	}
	return nil
}

// firstNewline is the offset of the first newline in [from, end), or -1.
func (r *Reader) firstNewline(from, end int64) (int64, error) {
	for off := from; off < end; {
		k := min(int64(len(r.buf)), end-off)
		got, err := r.f.ReadAt(r.buf[:k], off)
		if i := bytes.IndexByte(r.buf[:got], '\n'); i >= 0 {
			return off + int64(i), nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return -1, err
		}
		if got == 0 {
			break
		}
		off += int64(got)
	}
	return -1, nil
}

// Step writes to w the lines, and the pieces of a line without an end,
// that were appended since the offset, reading at most MaxRead; it
// returns how many bytes it read.
func (r *Reader) Step(w io.Writer) (int64, error) {
	size, err := r.size()
	if err != nil {
		return 0, err
	}
	from := r.pos
	end := min(size, from+MaxRead)
	err = r.read(from, end, func(p []byte) error { return writeLine(w, p) })
	return r.pos - from, err
}

// Flush writes a last line without an end, as at the end of the log.
func (r *Reader) Flush(w io.Writer) error {
	r.line = r.clean.Flush(r.line)
	if len(r.line) == 0 {
		return nil
	}
	err := writeLine(w, r.line)
	r.line = r.line[:0]
	return err
}

// Follow writes what is appended to the log, a Step every poll, until
// ctx ends (SIGINT), then the line without an end it holds. Across a
// rotation (Rotated) it goes on in the new file.
func (r *Reader) Follow(ctx context.Context, w io.Writer, poll time.Duration) error {
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		if err := r.catchUp(ctx, w); err != nil {
			return err
		}
		if r.Rotated != nil && ctx.Err() == nil {
			next, err := r.Rotated()
			if err != nil {
				return err
			}
			if next != nil {
				// Seen rotated first, so what the old file got before
				// the rotation is all there now.
				if err := r.catchUp(ctx, w); err != nil {
					return err
				}
				r.Next(next)
				continue
			}
		}
		if f, ok := w.(interface{ Flush() error }); ok {
			if err := f.Flush(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return r.Flush(w)
		case <-t.C:
		}
	}
}

// catchUp steps until the log has no more to read or ctx ends.
func (r *Reader) catchUp(ctx context.Context, w io.Writer) error {
	for {
		n, err := r.Step(w)
		if err != nil || n < MaxRead || ctx.Err() != nil {
			return err
		}
	}
}

// read reads [from, end) chunk by chunk, cleans it, and hands each
// complete line, and each Piece of a longer one, to emit.
func (r *Reader) read(from, end int64, emit func([]byte) error) error {
	r.pos = from
	for r.pos < end {
		k := min(int64(len(r.buf)), end-r.pos)
		got, err := r.f.ReadAt(r.buf[:k], r.pos)
		if got > 0 {
			r.pos += int64(got)
			r.cleaned = r.clean.Write(r.cleaned[:0], r.buf[:got])
			if err := r.split(r.cleaned, emit); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || got == 0 && err == nil {
			return nil // shorter than its size said: cut meanwhile
		}
		if err != nil {
			return fmt.Errorf("reading the log: %w", err)
		}
	}
	return nil
}

// split adds cleaned text to the line, handing on each line that ends
// and each Piece of one that runs longer.
func (r *Reader) split(data []byte, emit func([]byte) error) error {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		part := data
		if i >= 0 {
			part = data[:i]
		}
		if err := r.add(part, emit); err != nil {
			return err
		}
		if i < 0 {
			return nil
		}
		if err := emit(r.line); err != nil {
			return err
		}
		r.line = r.line[:0]
		data = data[i+1:]
	}
	return nil
}

// add appends b to the line and hands on Piece-sized pieces, each cut at
// a character's start, while it is longer than Piece.
func (r *Reader) add(b []byte, emit func([]byte) error) error {
	r.line = append(r.line, b...)
	start := 0
	for len(r.line)-start > Piece {
		k := start + Piece
		for k > start && !utf8.RuneStart(r.line[k]) {
			k--
		}
		if k == start {
			k = start + Piece
		}
		if err := emit(r.line[start:k]); err != nil {
			return err
		}
		start = k
	}
	if start > 0 {
		r.line = append(r.line[:0], r.line[start:]...)
	}
	return nil
}

func writeLine(w io.Writer, p []byte) error {
	if _, err := w.Write(p); err != nil {
		return err
	}
	_, err := w.Write([]byte{'\n'})
	return err
}
