package store

import (
	"bytes"
	"fmt"
	"io"
	"math"
)

// linesBack calls each with the whole lines of r's first end bytes (end
// just past a newline, or 0), the last first, until each says stop,
// holding at most about a line's limit and what it read last. A line
// past limit bytes is refused.
func linesBack(r io.ReaderAt, end int64, limit int, each func(line []byte) (stop bool, err error)) error {
	var buf []byte // the bytes [base, lineEnd): buf ends in the newline at lineEnd-1
	base, lineEnd := end, end
	for lineEnd > 0 {
		i := -1
		if len(buf) > 0 {
			i = bytes.LastIndexByte(buf[:len(buf)-1], '\n')
		}
		if i < 0 && base > 0 {
			if lineEnd-base > int64(limit)+1 {
				return ErrLineTooLong
			}
			n := grow(len(buf), base, limit)
			base -= n
			chunk, err := readAt(r, base, n)
			if err != nil {
				return err
			}
			buf = append(chunk, buf...)
			continue
		}
		line := buf[i+1 : len(buf)-1]
		if len(line) > limit {
			return ErrLineTooLong
		}
		stop, err := each(line)
		if err != nil || stop {
			return err
		}
		buf = buf[:i+1]
		lineEnd = base + int64(i) + 1
	}
	return nil
}

// sinceInLog reads the events after seq from the log's end backwards,
// and says whether the log alone held them all (a line numbered seq or
// less was reached); when it did not, the caller reads from the start.
func (v *Conversation) sinceInLog(seq int64) ([]Event, bool, error) {
	var rev []Event
	found := false
	next := int64(math.MaxInt64)
	err := linesBack(v.log, v.size, MaxLine, func(line []byte) (bool, error) {
		e, err := decodeEvent(line)
		if err != nil {
			return false, err
		}
		if e.Seq >= next {
			return false, fmt.Errorf("number %d before %d: a number written twice or out of order", e.Seq, next)
		}
		next = e.Seq
		if e.Seq <= seq {
			found = true
			return true, nil
		}
		rev = append(rev, e)
		return false, nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", logName, err)
	}
	if !found {
		return nil, false, nil
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev, true, nil
}

// recordedWindow finds the latest answer's recorded window reading the
// log from its end; nil when the log holds none.
func (v *Conversation) recordedWindow() (*Window, error) {
	var w *Window
	err := linesBack(v.log, v.size, MaxLine, func(line []byte) (bool, error) {
		e, err := decodeEvent(line)
		if err != nil {
			return false, err
		}
		if e.Kind == KindAnswer && e.Window != nil {
			w = e.Window
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", logName, err)
	}
	return w, nil
}
