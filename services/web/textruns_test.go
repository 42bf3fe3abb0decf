package web

import (
	"runtime"
	"strings"
	"testing"
)

// TestTextRunsConvertInLinearMemory: a page of one text run broken by
// end tags of nothing ("a</x>" again and again, which the parser joins
// into one text node) is made markdown with memory in proportion to the
// page. Before golang.org/x/net v0.63.0 the parser grew the node's text
// by one string concatenation a token, its copies the square of the
// page: 800 KB of it held a conversion slot, which cannot be stopped, for
// tens of seconds, and a 5 MB page for many minutes. Memory is the
// measure here, not time. The positive control: an ordinary page of the
// same size converts within the same bound.
func TestTextRunsConvertInLinearMemory(t *testing.T) {
	const reps = 40_000 // 200 KB: the square's copies would be 4 GB
	for _, c := range []struct{ name, page string }{
		{"ordinary page", strings.Repeat("<p>aaaa</p>", reps*5/11)},
		{"text run broken by end tags", strings.Repeat("a</x>", reps)},
		{"the same in a table (fostered)", "<table>" + strings.Repeat("a</x>", reps)},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, _, _, err := convertHTML([]byte(c.page), nil); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(len(c.page))*200; got > limit {
			t.Errorf("%s: %d bytes of page allocated %d bytes (bound %d)", c.name, len(c.page), got, limit)
		}
	}
}
