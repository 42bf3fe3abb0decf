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
// holding at most about max bytes of one line (a line past max is
// refused), and returns what follows the last newline: a torn line,
// which is not an event.
func readLines(r io.Reader, max int, each func(line []byte) error) (torn []byte, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(frag) > max {
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
			if len(line) > max {
				return nil, ErrLineTooLong
			}
			return bytes.Clone(line), nil
		}
		if err != nil {
			return nil, err
		}
		line = line[:len(line)-1]
		if len(line) > max {
			return nil, ErrLineTooLong
		}
		if err := each(line); err != nil {
			return nil, err
		}
	}
}

// keySet is the keys an object may hold, each at most once and spelled
// exactly so (encoding/json would take "SEQ" for "seq"); the objects
// within are checked by the sets their keys name.
type keySet map[string]keySet

var (
	callKeys   = keySet{"id": nil, "name": nil, "arguments": nil}
	tokenKeys  = keySet{"input": nil, "output": nil, "cost": nil}
	windowKeys = keySet{"seq": nil, "time": nil, "tokens": nil}
	eventKeys  = keySet{
		"seq": nil, "time": nil, "kind": nil, "from": nil, "text": nil, "calls": callKeys,
		"call_id": nil, "model": nil, "tokens": tokenKeys, "window": windowKeys, "hops": nil,
		"queued": nil,
	}
)

// checkKeys refuses an object (or, for calls, an array of objects) with
// a key set does not name, or one written twice.
func checkKeys(obj []byte, set keySet, in string) error {
	if len(obj) > 0 && obj[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(obj, &items); err != nil {
			return fmt.Errorf("%s: %w", in, err)
		}
		for _, it := range items {
			if err := checkKeys(it, set, in); err != nil {
				return err
			}
		}
		return nil
	}
	seen := map[string]bool{}
	var bad error
	if err := jsonscan.Members(obj, func(k string, v jsonscan.Span) {
		sub, ok := set[k]
		switch {
		case bad != nil:
		case !ok:
			bad = fmt.Errorf("unknown key %q%s", k, in)
		case seen[k]:
			bad = fmt.Errorf("key %q twice%s", k, in)
		case sub != nil && obj[v.Start] != 'n': // null is no object
			bad = checkKeys(obj[v.Start:v.End], sub, " in "+k)
		}
		seen[k] = true
	}); err != nil {
		return fmt.Errorf("not one JSON object%s", in)
	}
	return bad
}

// decodeEvent decodes one line strictly: one JSON object, no key
// unknown, repeated or in another case (in the objects within too), and
// an event [checkEvent] takes.
func decodeEvent(line []byte) (Event, error) {
	var e Event
	if err := checkKeys(line, eventKeys, ""); err != nil {
		return e, err
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
	case e.Queued < 0:
		return fmt.Errorf("event %d: a negative inbox number", e.Seq)
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
func parseLog(r io.Reader, after int64, add func(Event)) (last int64, torn []byte, err error) {
	return parseLines(r, MaxLine, after, add)
}

// parseLines is parseLog with a line's limit of max bytes.
func parseLines(r io.Reader, max int, after int64, add func(Event)) (last int64, torn []byte, err error) {
	last = after
	n := 0
	torn, err = readLines(r, max, func(line []byte) error {
		n++
		e, err := decodeEvent(line)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
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
