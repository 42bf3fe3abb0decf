package store

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// tailChunk is how much of the log is read at a time from its end (a
// variable only so the fuzz target can make it small, reaching every
// way a line can fall across chunks).
var tailChunk = 64 << 10

// readTail learns the log's last number from its last whole line,
// reading backwards from the end (never more than one line's limit), and
// cuts a torn last line off through the log's handle.
func (v *Conversation) readTail() error {
	var st unix.Stat_t
	if err := unix.Fstat(int(v.log.Fd()), &st); err != nil {
		return err
	}
	size := st.Size
	end, line, err := lastLine(v.log, size, MaxLine)
	if err != nil {
		return fmt.Errorf("%s: %w", logName, err)
	}
	if end < size {
		head, _ := readAt(v.log, end, min(size-end, 80))
		v.logf("%s ended in a torn line of %d bytes (a write cut short), not an event: cut off (it began %s)",
			logName, size-end, strconv.Quote(string(head)))
		if err := unix.Ftruncate(int(v.log.Fd()), end); err != nil {
			return fmt.Errorf("cutting the torn line off %s: %w", logName, err)
		}
	}
	v.size = end
	if line == nil {
		return nil
	}
	e, err := decodeEvent(line)
	if err != nil {
		return fmt.Errorf("%s: its last line: %w", logName, err)
	}
	v.last = e.Seq
	return nil
}

// lastLine finds, in the first size bytes of f, where its whole lines
// end (after the last newline) and the last whole line (nil when there
// is none). A torn tail or a last line past limit bytes is refused.
func lastLine(f io.ReaderAt, size int64, limit int) (end int64, line []byte, err error) {
	nl := -1 // the last newline's offset, found by reading backwards
	var tail []byte
	for pos := size; pos > 0 && nl < 0; {
		n := grow(len(tail), pos, limit)
		pos -= n
		chunk, err := readAt(f, pos, n)
		if err != nil {
			return 0, nil, err
		}
		tail = append(chunk, tail...)
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			nl = int(pos) + i
		} else if int64(len(tail)) > int64(limit)+1 {
			return 0, nil, ErrLineTooLong
		}
	}
	if nl < 0 {
		return 0, nil, nil // empty, or only a torn line
	}
	end = int64(nl) + 1
	// The last whole line runs from the newline before it.
	start := int64(0)
	buf := tail[:len(tail)-int(size-end)]
	base := size - int64(len(tail))
	for {
		if i := bytes.LastIndexByte(buf[:len(buf)-1], '\n'); i >= 0 {
			start = base + int64(i) + 1
			break
		}
		if base == 0 {
			break
		}
		if end-base > int64(limit)+1 {
			return 0, nil, ErrLineTooLong
		}
		n := grow(len(buf), base, limit)
		base -= n
		chunk, err := readAt(f, base, n)
		if err != nil {
			return 0, nil, err
		}
		buf = append(chunk, buf...)
	}
	if end-1-start > int64(limit) {
		return 0, nil, ErrLineTooLong
	}
	return end, buf[len(buf)-int(end-start) : len(buf)-1], nil
}

// grow is how much more to read backwards, holding held bytes, with
// left before them: as much again as is held (so each byte is copied a
// few times, not once a chunk), at least a chunk, never past a line's
// limit and two bytes (a newline each side).
func grow(held int, left int64, limit int) int64 {
	n := max(int64(tailChunk), int64(held))
	n = min(n, left, max(int64(limit)+2-int64(held), 1))
	return n
}

func readAt(f io.ReaderAt, off, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

var _ io.ReaderAt = (*os.File)(nil)
