package webhook

import (
	"bytes"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzSeenLog: the reader of hooks-seen.log, whose lines hold ids a
// stranger's post named, never panics, takes only whole lines (a last
// one cut short left out), and reads back exactly what the listener
// appends.
func FuzzSeenLog(f *testing.F) {
	f.Add([]byte("\"0123 a\":\"2026-12-07T15:00:00Z\"\n\"0123 b\":\"2026-12-07T15:00:01Z\"\n\"0123 c\":\"20"), "x y")
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		taken := map[string]time.Time{}
		err := parseSeenLog(data, taken)
		if err == nil && len(taken) > bytes.Count(data, []byte{'\n'}) {
			t.Fatalf("%d ids from %d lines", len(taken), bytes.Count(data, []byte{'\n'}))
		}
		at := time.Unix(1_800_000_000, 0).UTC()
		e, err := newKept(key, at)
		if err != nil {
			if utf8.ValidString(key) {
				t.Fatalf("%q refused: %v", key, err)
			}
			return // refused: JSON would write another id in its place
		}
		var b bytes.Buffer
		b.WriteString(e.json)
		b.WriteByte('\n')
		b.WriteString(e.json[:len(e.json)/2]) // a write cut short after it
		got := map[string]time.Time{}
		if err := parseSeenLog(b.Bytes(), got); err != nil || len(got) != 1 || !got[key].Equal(at) {
			t.Fatalf("%q not read back: %v %v", key, got, err)
		}
	})
}
