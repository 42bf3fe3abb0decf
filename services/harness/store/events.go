package store

import (
	"fmt"
	"io"
)

// Events returns every event of the conversation in order: an older
// harness's files, then a compact chat's frames, then the log. Anything
// refused on the way (see the package doc) fails the whole read.
func (v *Conversation) Events() ([]Event, error) {
	return v.Since(0)
}

// Since returns the events numbered after seq. When the log holds an
// event numbered seq or less, it reads the log from its end back to
// there and no further, so a turn that needs only its window's events
// reads only those; else it reads as [Conversation.Events] does.
func (v *Conversation) Since(seq int64) ([]Event, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return nil, ErrClosed
	}
	return v.sinceLocked(seq)
}

func (v *Conversation) sinceLocked(seq int64) ([]Event, error) {
	if seq > 0 {
		if out, ok, err := v.sinceInLog(seq); err != nil || ok {
			return out, err
		}
	}
	var out []Event
	add := func(e Event) {
		if e.Seq > seq {
			out = append(out, e)
		}
	}
	last, err := readOld(v.dirFd(), add)
	if err != nil {
		return nil, err
	}
	last, err = v.readFrames(last, add)
	if err != nil {
		return nil, err
	}
	if _, err := v.readLog(last, add); err != nil {
		return nil, err
	}
	return out, nil
}

// readLog reads the log's whole lines (its first size bytes) after the
// number after. (A log whose lines a frame holds too, a compaction cut
// short, was emptied when the conversation opened: such a line here is
// a number written twice, refused.)
func (v *Conversation) readLog(after int64, add func(Event)) (int64, error) {
	last, torn, err := parseLog(io.NewSectionReader(v.log, 0, v.size), after, add)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", logName, err)
	}
	if len(torn) > 0 {
		// Open cut any torn line off and every append is whole.
		return 0, fmt.Errorf("%s: %d bytes past its last line", logName, len(torn))
	}
	return last, nil
}
