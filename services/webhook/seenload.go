package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// The record's reading at a start. The listener writes every entry of
// hooks-seen.json and every line of hooks-seen.log the same way (newKept:
// `"<key>":"<time>"`, the time in UTC to the second), so the reader first
// takes the text as it was written: each entry's key and JSON are
// slices of the one text read, each day of a time parsed by time.Time's
// own UnmarshalJSON (timeCache). Anything else (a space, an escape, a
// byte json.Marshal would escape, a key twice, a time written
// otherwise) is read by the strict reader instead (encoding/json, as
// before): hooks-seen.json whole, or that one line of the log. Either
// way the result is the strict reader's (FuzzSeenLoadIsStrict). The
// keys held keep the text they are slices of until none is left: no
// more than the record's own size.

// errNotARecord is a hooks-seen.json that is JSON's null.
var errNotARecord = errors.New("null, not an object of ids")

// readRecord is hooks-seen.json's text in dirfd (opened through
// internal/ownerfile, as ReadFile opens it), refused past maxSeenFile
// bytes: read into a string made as large as the file at once, so that
// the entries' keys and JSON can be slices of it with no copy.
func readRecord(dirfd int) (string, error) {
	f, err := ownerfile.OpenFile(dirfd, SeenName, seenRule)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(int(min(max(st.Size, 0), maxSeenFile) + 1))
	n, err := io.Copy(&b, io.LimitReader(f, maxSeenFile+1))
	if err != nil {
		return "", err
	}
	if n > maxSeenFile {
		return "", fmt.Errorf("%s is larger than %d bytes", SeenName, maxSeenFile)
	}
	return b.String(), nil
}

// loadRecord reads hooks-seen.json's text into the record (taken, kept
// and bytes; the listener not yet serving).
func (s *seen) loadRecord(text string) error {
	if taken, kept, n, ok := scanRecord(text); ok {
		s.taken, s.kept, s.bytes = taken, kept, n
		return nil
	}
	var taken map[string]time.Time
	if err := json.Unmarshal([]byte(text), &taken); err != nil {
		return fmt.Errorf("%s: %w", SeenName, err)
	}
	if taken == nil {
		// null: no map at all, which the listener never writes (and
		// the reader before took, to fail at the first post taken).
		return fmt.Errorf("%s: %w", SeenName, errNotARecord)
	}
	s.taken = taken
	return s.rebuild()
}

// scanRecord reads text as the listener writes hooks-seen.json: `{`,
// entries joined by `,`, `}`, nothing else. ok false: not so written
// (the strict reader decides).
func scanRecord(text string) (taken map[string]time.Time, kept []keptID, n int64, ok bool) {
	if len(text) < 2 || text[0] != '{' || text[len(text)-1] != '}' {
		return nil, nil, 0, false
	}
	body := text[1 : len(text)-1]
	size := strings.Count(body, `":"`)
	taken, kept, n = make(map[string]time.Time, size), make([]keptID, 0, size), 2
	var times timeCache
	for body != "" {
		e, rest, ok := entryAt(body, &times)
		if !ok {
			return nil, nil, 0, false
		}
		had := len(taken)
		taken[e.key] = e.at // one lookup: a key twice leaves the count
		if len(taken) == had {
			return nil, nil, 0, false
		}
		kept = append(kept, e)
		n += e.cost()
		if rest == "" {
			break
		}
		if rest[0] != ',' || len(rest) == 1 {
			return nil, nil, 0, false
		}
		body = rest[1:]
	}
	sortKept(kept)
	return taken, kept, n, true
}

// merge reads the log's lines into the record (s.mu held), keeping the
// later time of an id read twice, in taken and in kept alike.
func (s *seen) merge(data []byte) error {
	logged := map[string]keptID{}
	err := scanSeenLog(data, func(e keptID) {
		if was, ok := logged[e.key]; !ok || e.at.After(was.at) {
			logged[e.key] = e
		}
	})
	if err != nil {
		return err
	}
	var stale map[string]bool
	for k, e := range logged {
		was, ok := s.taken[k]
		if ok && !e.at.After(was) {
			continue
		}
		if ok {
			if stale == nil {
				stale = map[string]bool{}
			}
			stale[k] = true
		}
		s.taken[k] = e.at
		s.kept = append(s.kept, e)
		s.bytes += e.cost()
	}
	if stale != nil {
		s.kept = slices.DeleteFunc(s.kept, func(e keptID) bool {
			if stale[e.key] && !e.at.Equal(s.taken[e.key]) {
				s.bytes -= e.cost()
				return true
			}
			return false
		})
	}
	sortKept(s.kept)
	return nil
}

// parseSeenLog reads the log's lines into taken, keeping the later time
// of an id read twice. A last line without its newline is a write a
// crash cut short, whose posts were never answered 202: it is left out.
// Any other line that is not one id and its time refuses the whole log.
func parseSeenLog(data []byte, taken map[string]time.Time) error {
	return scanSeenLog(data, func(e keptID) {
		if was, ok := taken[e.key]; !ok || e.at.After(was) {
			taken[e.key] = e.at
		}
	})
}

// scanSeenLog calls add with each whole line's entry, in order: one as
// the listener writes it is taken as it is, any other line is read by
// the strict reader (a JSON object of one id and its time, alone).
func scanSeenLog(data []byte, add func(keptID)) error {
	text := string(data)
	var times timeCache
	for n := 1; ; n++ {
		line, rest, ok := strings.Cut(text, "\n")
		if !ok {
			return nil
		}
		text = rest
		if e, after, ok := entryAt(line, &times); ok && after == "" {
			add(e)
			continue
		}
		var m map[string]time.Time
		d := json.NewDecoder(io.MultiReader(strings.NewReader("{"), strings.NewReader(line), strings.NewReader("}")))
		if err := d.Decode(&m); err != nil || d.More() || len(m) != 1 {
			return fmt.Errorf("%s: line %d is not an id and the time it was taken", SeenLogName, n)
		}
		for k, at := range m {
			e, err := newKept(k, at)
			if err != nil {
				return fmt.Errorf("%s: line %d: %w", SeenLogName, n, err)
			}
			add(e)
		}
	}
}

// entryAt reads the entry at the start of text as newKept writes it,
// `"<key>":"<time>"`, returning it (its key and JSON slices of text)
// and the text after it. ok false: not so written.
func entryAt(text string, times *timeCache) (e keptID, rest string, ok bool) {
	if len(text) < 2 || text[0] != '"' {
		return keptID{}, "", false
	}
	end := 1
	for end < len(text) && plainKeyByte(text[end]) {
		end++
	}
	// The key, then `:`, then the time: `"` and its 20 bytes and `"`.
	if end >= len(text) || text[end] != '"' || len(text) < end+2+timeLen || text[end+1] != ':' {
		return keptID{}, "", false
	}
	at, ok := times.parse(text[end+2 : end+2+timeLen])
	if !ok {
		return keptID{}, "", false
	}
	all := end + 2 + timeLen
	return keptID{key: text[1:end], at: at, json: text[:all]}, text[all:], true
}

// plainKeyByte is a byte json.Marshal writes as it is, and that the
// strict reader reads as itself: printable ASCII but for `"`, `\` and
// the <, > and & it escapes.
func plainKeyByte(c byte) bool {
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// timeLen is a time as newKept writes it, quoted: "2006-01-02T15:04:05Z".
const timeLen = len(`"2006-01-02T15:04:05Z"`)

// timeCache parses the times of entries, the midnight of the last day
// read kept: the record being in the order its ids were taken, many
// follow one of the same day.
type timeCache struct {
	day      string // "2006-01-02"
	midnight time.Time
}

// parse reads quoted as newKept writes a time, "2006-01-02T15:04:05Z"
// (in UTC, to the second). Its day is parsed by time.Time's
// UnmarshalJSON, as the strict reader parses the whole time, and is
// written back the same by its MarshalJSON, as newKept writes it; the
// time of day is two digits each of an hour (below 24), a minute and a
// second (below 60), which the strict reader takes alike, added to the
// day's midnight. ok false: not so written (the strict reader decides).
func (c *timeCache) parse(quoted string) (time.Time, bool) {
	if len(quoted) != timeLen || quoted[0] != '"' || quoted[timeLen-1] != '"' {
		return time.Time{}, false
	}
	for i := 1; i < timeLen-1; i++ {
		want := byte('0')
		switch i {
		case 5, 8:
			want = '-'
		case 11:
			want = 'T'
		case 14, 17:
			want = ':'
		case 20:
			want = 'Z'
		}
		if c := quoted[i]; (want == '0' && (c < '0' || c > '9')) || (want != '0' && c != want) {
			return time.Time{}, false
		}
	}
	two := func(i int) int { return int(quoted[i]-'0')*10 + int(quoted[i+1]-'0') }
	h, m, sec := two(12), two(15), two(18)
	if h > 23 || m > 59 || sec > 59 {
		return time.Time{}, false
	}
	if day := quoted[1:11]; day != c.day {
		midnight := `"` + day + `T00:00:00Z"`
		var at time.Time
		if err := at.UnmarshalJSON([]byte(midnight)); err != nil {
			return time.Time{}, false
		}
		back, err := at.MarshalJSON()
		if err != nil || string(back) != midnight {
			return time.Time{}, false
		}
		c.day, c.midnight = day, at
	}
	return c.midnight.Add(time.Duration(h*3600+m*60+sec) * time.Second), true
}

// sortKept puts kept in the order taken, when it is not already.
func sortKept(kept []keptID) {
	byTime := func(a, b keptID) int { return a.at.Compare(b.at) }
	if !slices.IsSortedFunc(kept, byTime) {
		slices.SortFunc(kept, byTime)
	}
}
