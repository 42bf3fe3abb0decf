package logtail

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"lnk.dev/lnk/internal/textsafe"
)

func logFile(t *testing.T, content ...[]byte) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "harness.log"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	for _, c := range content {
		if _, err := f.Write(c); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func size(t *testing.T, f *os.File) int64 {
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// clean checks out is what a terminal can take: valid UTF-8, no control
// but newline and tab, every line at most Piece bytes.
func clean(t *testing.T, out []byte) {
	t.Helper()
	if !utf8.Valid(out) {
		t.Fatal("output is not valid UTF-8")
	}
	for _, r := range string(out) {
		if r != '\n' && r != '\t' && textsafe.Refused(r) {
			t.Fatalf("%U in the output", r)
		}
	}
	for _, l := range bytes.Split(out, []byte("\n")) {
		if len(l) > Piece {
			t.Fatalf("a line of %d bytes, over %d", len(l), Piece)
		}
	}
}

// TestTailFromTheLastStart: what came before the recorded offset is not
// shown, even a line the harness printed to look like a start; escape
// sequences are removed whole.
func TestTailFromTheLastStart(t *testing.T) {
	f := logFile(t, []byte("before the start: secret-old\n-- started --\n"))
	start := size(t, f)
	f.Write([]byte("\x1b]0;title\x07new \x1b[31mred\x1b[0m\r\n-- started --\nlast"))
	var out bytes.Buffer
	if err := New(f, start).Tail(&out, Lines, true); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "new red\n-- started --\nlast\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	// The positive control: from 0, the earlier lines are there.
	out.Reset()
	New(f, 0).Tail(&out, Lines, true)
	if !strings.Contains(out.String(), "secret-old") {
		t.Fatalf("from 0: %q", out.String())
	}
	// A start past the end (the log was replaced): read from 0.
	out.Reset()
	truncated := false
	r := New(f, size(t, f)+100)
	r.Truncated = func() { truncated = true }
	r.Tail(&out, 1, true)
	if !truncated || out.String() != "last\n" {
		t.Fatalf("start past the end: %q %v", out.String(), truncated)
	}
}

// TestTailLastLinesOfTheLastMaxRead: 200 lines at most, from at most the
// last MaxRead bytes, the cut line at the window's start left out.
func TestTailLastLinesOfTheLastMaxRead(t *testing.T) {
	var b bytes.Buffer
	for i := 0; b.Len() < 2*MaxRead; i++ {
		fmt.Fprintf(&b, "line %08d %s\n", i, strings.Repeat("x", 1000))
	}
	f := logFile(t, b.Bytes())
	var out bytes.Buffer
	if err := New(f, 0).Tail(&out, Lines, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	all := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != Lines || lines[Lines-1] != all[len(all)-1] || lines[0] != all[len(all)-Lines] {
		t.Fatalf("%d lines, last %.20q", len(lines), lines[len(lines)-1])
	}
	// With room for more lines than the window holds, it starts at the
	// first whole line of the last MaxRead bytes.
	out.Reset()
	New(f, 0).Tail(&out, 10000, true)
	first, _, _ := strings.Cut(out.String(), "\n")
	if out.Len() > MaxRead || !strings.HasPrefix(first, "line ") || len(first) != len(all[0]) {
		t.Fatalf("window of %d bytes, first line %.30q", out.Len(), first)
	}
}

// TestBinaryAndEndlessLinesStayBounded: random bytes clean; a 100 MB line
// without a newline is shown in Piece-sized pieces by the tail (from its
// last MaxRead) and by Follow's steps (each at most MaxRead), and reading
// all of it allocates a bounded amount, nowhere near the line's size.
func TestBinaryAndEndlessLinesStayBounded(t *testing.T) {
	junk := make([]byte, 1<<20)
	rand.Read(junk)
	var out bytes.Buffer
	if err := New(logFile(t, junk), 0).Tail(&out, Lines, true); err != nil {
		t.Fatal(err)
	}
	clean(t, out.Bytes())

	const total = 100 << 20
	f := logFile(t)
	block := bytes.Repeat([]byte("a\x1b[1mb"), (1<<20)/6)
	for n := 0; n < total; n += len(block) {
		f.Write(block)
	}
	out.Reset()
	if err := New(f, 0).Tail(&out, Lines, true); err != nil {
		t.Fatal(err)
	}
	clean(t, out.Bytes())
	if out.Len() > MaxRead || out.Len() < MaxRead/4 { // 6 bytes in, 2 out
		t.Fatalf("tail of an endless line: %d bytes", out.Len())
	}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := New(f, 0)
	var c counter
	for {
		n, err := r.Step(&c)
		if err != nil {
			t.Fatal(err)
		}
		if n > MaxRead {
			t.Fatalf("a step read %d bytes", n)
		}
		if n == 0 {
			break
		}
	}
	r.Flush(&c)
	runtime.ReadMemStats(&after)
	if c.bytes < total/4 || c.longest > Piece {
		t.Fatalf("follow wrote %d bytes, longest line %d", c.bytes, c.longest)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("following a %d-byte line allocated %d bytes", total, alloc)
	}
}

// counter counts what is written, and the longest line.
type counter struct{ bytes, run, longest int }

func (c *counter) Write(p []byte) (int, error) {
	for _, b := range p {
		c.run++
		if b == '\n' {
			c.run = 0
		}
		c.longest = max(c.longest, c.run-1)
	}
	c.bytes += len(p)
	return len(p), nil
}

// TestFollowShowsWhatIsAppended: lines appended after the tail show, a
// line without an end shows at the end (the context's), and a log cut
// short is read again from its start.
func TestFollowShowsWhatIsAppended(t *testing.T) {
	f := logFile(t, []byte("one\n"))
	r := New(f, 0)
	var out bytes.Buffer
	r.Tail(&out, Lines, false)
	f.Write([]byte("two\x1b[2J\nthr"))
	r.Step(&out)
	f.Write([]byte("ee\nfour"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Follow(ctx, &out, 1); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "one\ntwo\nthree\nfour\n" {
		t.Fatalf("got %q", got)
	}
	f.Truncate(0)
	f.Write([]byte("new\n"))
	out.Reset()
	cut := false
	r.Truncated = func() { cut = true }
	r.Step(&out)
	if !cut || out.String() != "new\n" {
		t.Fatalf("after a cut: %q %v", out.String(), cut)
	}
}

// FuzzTail: any log and start offset give clean output, at most Lines
// lines of at most Piece bytes, and Follow's steps show the same text as
// a tail with room for every line.
func FuzzTail(f *testing.F) {
	f.Add([]byte("a\nb\x1b[31m\nc"), int64(2))
	f.Add([]byte("\xff\xfe\x00\x1b]0;x\n\u009b1m"), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, start int64) {
		lf := logFile(t, data)
		var out bytes.Buffer
		if err := New(lf, start).Tail(&out, Lines, true); err != nil {
			t.Fatal(err)
		}
		clean(t, out.Bytes())
		if strings.Count(out.String(), "\n") > Lines {
			t.Fatalf("%d lines", strings.Count(out.String(), "\n"))
		}
		var all, steps bytes.Buffer
		New(lf, start).Tail(&all, len(data)+2, true) // room for every line
		r := New(lf, start)
		for {
			n, err := r.Step(&steps)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
		}
		r.Flush(&steps)
		if all.String() != steps.String() {
			t.Fatalf("tail %q, steps %q", all.String(), steps.String())
		}
	})
}

// FuzzParseStart: any start file parses to a non-negative offset, in
// the log or ("1:") in its previous file, that reads back as the file
// held it (but for leading zeros and a final newline), or is refused.
func FuzzParseStart(f *testing.F) {
	for _, s := range []string{"0\n", "12345", "-1", "9223372036854775808", "1 2", "", "1:0", "1:77\n", "1:", "1:1:2", "2:5"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStart(b)
		if err != nil {
			return
		}
		if s.Offset < 0 {
			t.Fatalf("%q parsed to %+v", b, s)
		}
		held := strings.TrimSuffix(string(b), "\n")
		if strings.HasPrefix(held, prevPrefix) != s.Prev {
			t.Fatalf("%q parsed to %+v", b, s)
		}
		// leading zeros are the one other form taken
		trim := func(x string) string { return strings.TrimLeft(strings.TrimPrefix(x, prevPrefix), "0") }
		if trim(held) != trim(s.String()) {
			t.Fatalf("%q parsed to %+v, which reads back %q", b, s, s.String())
		}
	})
}

func itoa(n int64) string { return fmt.Sprint(n) }
