package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"lnk.dev/lnk/internal/jsonscan"
)

// MaxLine is the longest line a log may hold, in bytes, its newline
// aside (the spec's 16 MB): a longer one is refused, never read whole.
const MaxLine = 16_000_000

// ErrLineTooLong is wrapped when a log's line passes [MaxLine].
var ErrLineTooLong = errors.New("a line past 16 MB, which Link never reads")

// readLines calls each with every whole line of r (its newline cut off),
// holding at most MaxLine+1 bytes of one line, and returns what follows
// the last newline: a torn line, which is not an event.
func readLines(r io.Reader, each func(line []byte) error) (torn []byte, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(frag) > MaxLine {
				return nil, ErrLineTooLong
			}
			long = append(long, frag...)
			continue
		}
		line := frag
		if long != nil {
			line = append(long, frag...)
			long = nil
		}
		if err == io.EOF {
			if len(line) > MaxLine {
				return nil, ErrLineTooLong
			}
			return bytes.Clone(line), nil
		}
		if err != nil {
			return nil, err
		}
		line = line[:len(line)-1]
		if len(line) > MaxLine {
			return nil, ErrLineTooLong
		}
		if err := each(line); err != nil {
			return nil, err
		}
	}
}

// fields are the keys an event's line may hold, each at most once and
// spelled exactly so (encoding/json would take "SEQ" for "seq").
var fields = map[string]bool{
	"seq": true, "time": true, "kind": true, "from": true, "text": true, "calls": true,
	"call_id": true, "model": true, "tokens": true, "window": true, "hops": true,
}

// decodeEvent decodes one line strictly: one JSON object, no key
// unknown, repeated or in another case, and an event [checkEvent] takes.
func decodeEvent(line []byte) (Event, error) {
	var e Event
	seen := map[string]bool{}
	var bad error
	if err := jsonscan.Members(line, func(k string, _ jsonscan.Span) {
		switch {
		case bad != nil:
		case !fields[k]:
			bad = fmt.Errorf("unknown key %q", k)
		case seen[k]:
			bad = fmt.Errorf("key %q twice", k)
		}
		seen[k] = true
	}); err != nil {
		return e, fmt.Errorf("not one JSON object")
	}
	if bad != nil {
		return e, bad
	}
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil {
		return e, err
	}
	return e, checkEvent(&e)
}

// checkEvent refuses an event without a number, a time, or a kind of
// this store's.
func checkEvent(e *Event) error {
	switch {
	case e.Seq < 1:
		return fmt.Errorf("number %d: numbers start at 1", e.Seq)
	case e.Time.IsZero():
		return fmt.Errorf("event %d has no time", e.Seq)
	case !knownKind(e.Kind):
		return fmt.Errorf("event %d: unknown kind %q", e.Seq, e.Kind)
	case e.Hops < 0:
		return fmt.Errorf("event %d: negative hops", e.Seq)
	}
	return nil
}

func knownKind(k string) bool {
	switch k {
	case KindMessage, KindAnswer, KindToolCall, KindToolResult, KindSummary:
		return true
	}
	return false
}

// parseLog reads every event of a log (or a frame's lines) from r,
// numbers rising past after; torn is what follows the last newline.
// Lines numbered at most skip are already in a frame (a compaction cut
// short) and are left out.
func parseLog(r io.Reader, after, skip int64, add func(Event)) (last int64, torn []byte, err error) {
	last = after
	n := 0
	torn, err = readLines(r, func(line []byte) error {
		n++
		e, err := decodeEvent(line)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if e.Seq <= skip {
			return nil
		}
		if e.Seq <= last {
			return fmt.Errorf("line %d: number %d after %d: a number written twice or out of order", n, e.Seq, last)
		}
		last = e.Seq
		add(e)
		return nil
	})
	return last, torn, err
}
