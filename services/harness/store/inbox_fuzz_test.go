package store

import (
	"encoding/json"
	"testing"
)

// FuzzParseInbox: the inbox's reader never panics; what it takes is
// whole lines, and each message it gives back passes the checks a queued
// message is written with, its number once.
func FuzzParseInbox(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		p, whole, err := ParseInbox(data)
		if err != nil {
			return
		}
		if whole > len(data) || (whole > 0 && data[whole-1] != '\n') {
			t.Fatalf("whole lines end at %d of %d", whole, len(data))
		}
		seen := map[int64]bool{}
		for _, q := range p {
			if err := q.check(); err != nil {
				t.Fatalf("taken, a message its writer would refuse: %v", err)
			}
			if seen[q.ID] {
				t.Fatalf("message %d given twice", q.ID)
			}
			seen[q.ID] = true
			// What it gives back writes again as a line it takes.
			b, _ := json.Marshal(q)
			if again, _, err := ParseInbox(append(b, '\n')); err != nil || len(again) != 1 {
				t.Fatalf("written again, refused: %v", err)
			}
		}
	})
}
