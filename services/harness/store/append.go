package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/sys/unix"
)

// ErrWritten is wrapped when an event's number is already written.
var ErrWritten = errors.New("a number already written")

// ErrClosed is returned by a closed conversation.
var ErrClosed = errors.New("the conversation is closed")

// Append adds e to the log as one line in one write(2), and its readable
// form to conversation.md. A zero Seq becomes the last number plus one;
// one at most the last is refused ([ErrWritten]); a zero Time becomes
// now. It returns e's number.
func (v *Conversation) Append(e *Event) (int64, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return 0, ErrClosed
	}
	if e.Seq == 0 {
		e.Seq = v.last + 1
	} else if e.Seq <= v.last {
		return 0, fmt.Errorf("event %d: %w (the last is %d)", e.Seq, ErrWritten, v.last)
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	if err := checkEvent(e); err != nil {
		return 0, err
	}
	line, err := json.Marshal(e)
	if err != nil {
		return 0, fmt.Errorf("event %d: %w", e.Seq, err)
	}
	if len(line) > MaxLine {
		return 0, fmt.Errorf("event %d is %d bytes, %w", e.Seq, len(line), ErrLineTooLong)
	}
	line = append(line, '\n')
	if err := v.write(line); err != nil {
		return 0, err
	}
	v.last = e.Seq
	v.appendReadable(e)
	return e.Seq, nil
}

// write adds line to the log in one write(2); a write cut short is cut
// off again, so the log holds whole lines only.
func (v *Conversation) write(line []byte) error {
	n, err := unix.Write(int(v.log.Fd()), line)
	if err == nil && n != len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if n > 0 {
			if terr := unix.Ftruncate(int(v.log.Fd()), v.size); terr != nil {
				return fmt.Errorf("writing %s: %w, and cutting the part written off: %w", logName, err, terr)
			}
		}
		return fmt.Errorf("writing %s: %w", logName, err)
	}
	v.size += int64(n)
	return nil
}
