package scheduler

import (
	"testing"
	"time"
)

// FuzzParseCron: no line panics the parser, and a line it takes has a
// next time after any moment, or says it has none.
func FuzzParseCron(f *testing.F) {
	f.Add("*/5 9-17 * * 1-5")
	f.Add("0 0 31 2 *")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCron(s)
		if err != nil {
			return
		}
		from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if n, ok := c.Next(from, time.UTC); ok && !n.After(from) {
			t.Fatalf("%q: next %v is not after %v", s, n, from)
		}
	})
}

// FuzzParseJob: a job file it takes is a whole job.
func FuzzParseJob(f *testing.F) {
	f.Add([]byte(`{"id":"0123456789abcdef","thread":"main","hops":1,"text":"hi","at":"2026-12-07T10:00:00Z","next":"2026-12-07T10:00:00Z","created":"2026-12-07T09:00:00Z"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := ParseJob(b)
		if err != nil {
			return
		}
		if j.check() != nil || j.Hops < 1 {
			t.Fatalf("a job taken that doesn't check: %+v", j)
		}
	})
}
