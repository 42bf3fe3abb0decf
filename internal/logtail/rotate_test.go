package logtail

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestTailAcrossARotation: a start in the previous file is read from its
// offset there, then the log; a line cut between the two is one line;
// what came before the start is not shown, and the window stays MaxRead.
func TestTailAcrossARotation(t *testing.T) {
	before := "before the start: old-secret\n"
	prev := logFile(t, []byte(before+"started\nhalf of a li"))
	cur := logFile(t, []byte("ne\nlast\n"))
	r, err := NewJoined(prev, int64(len(before)), cur)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := r.Tail(&out, Lines, true); err != nil {
		t.Fatal(err)
	}
	if want := "started\nhalf of a line\nlast\n"; out.String() != want {
		t.Fatalf("tail %q, want %q", out.String(), want)
	}
	// The previous file full: the window is the last MaxRead of both.
	line := strings.Repeat("p", 1023) + "\n"
	big := logFile(t, []byte(strings.Repeat(line, MaxRead/len(line))))
	r, err = NewJoined(big, 0, logFile(t, []byte("newest\n")))
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := r.Tail(&out, MaxRead, true); err != nil {
		t.Fatal(err)
	}
	if got := out.Len(); got > MaxRead || !strings.HasSuffix(out.String(), line+"newest\n") {
		t.Fatalf("tail of %d bytes ending %q", got, out.String()[max(0, got-40):])
	}
}

// TestFollowGoesOnAfterARotation: Follow reads what the old file got
// before the rotation, then the new file from its beginning, a line cut
// between the two whole; until rotated it stays on its file.
func TestFollowGoesOnAfterARotation(t *testing.T) {
	old := logFile(t, []byte("one\n"))
	next := logFile(t)
	r := New(old, 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	calls := 0
	r.Rotated = func() (*os.File, error) {
		calls++
		switch calls {
		case 1:
			return nil, nil // not rotated: Follow stays
		case 2:
			// The old file's last bytes, written after Follow caught
			// up, just before the rotation; then the new file's.
			for _, w := range []struct {
				f *os.File
				s string
			}{{old, "tw"}, {next, "o\nthree\n"}} {
				if _, err := w.f.Write([]byte(w.s)); err != nil {
					t.Error(err)
				}
			}
			return next, nil
		}
		if strings.Contains(out.String(), "three") {
			cancel()
		}
		return nil, nil
	}
	if err := r.Follow(ctx, &out, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if want := "one\ntwo\nthree\n"; out.String() != want {
		t.Fatalf("followed %q, want %q", out.String(), want)
	}
}
