package lines_test

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/lines"
)

var errLong = errors.New("too long")

func TestRead(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader("one\n"+strings.Repeat("x", 100)+"\nlast"), 16)
	if l, err := lines.Read(br, 10, errLong); string(l) != "one" || err != nil {
		t.Fatalf("first line: %q %v", l, err)
	}
	if _, err := lines.Read(br, 10, errLong); err != errLong {
		t.Fatalf("a line over the cap: %v", err)
	}
	br = bufio.NewReaderSize(strings.NewReader(strings.Repeat("y", 40)+"\nlast"), 16)
	if l, err := lines.Read(br, 64, errLong); len(l) != 40 || err != nil {
		t.Fatalf("a line longer than the buffer: %d %v", len(l), err)
	}
	if l, err := lines.Read(br, 64, errLong); string(l) != "last" || err != nil {
		t.Fatalf("a last line without newline: %q %v", l, err)
	}
	if _, err := lines.Read(br, 64, errLong); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
}
