package bucket

import (
	"strings"
	"testing"
)

// TestLastLinesIsOnePrintableLine: rclone's stderr, which names files
// the agent named, comes back as one line without control characters,
// date prefixes or repeats; the message itself (the control) is kept.
func TestLastLinesIsOnePrintableLine(t *testing.T) {
	in := "2026/12/07 15:40:07 ERROR : work/\x1b]0;evil\x07name: Failed to copy: denied\n" +
		"2026/12/07 15:40:07 ERROR : work/\x1b]0;evil\x07name: Failed to copy: denied\n\n" +
		"2026/12/07 15:40:08 Failed to sync: denied\n"
	got := lastLines(in, 3)
	if strings.ContainsAny(got, "\x1b\x07\n") || strings.Contains(got, "2026/") {
		t.Fatalf("%q", got)
	}
	if got != "ERROR : work/]0;evilname: Failed to copy: denied / Failed to sync: denied" {
		t.Fatalf("%q", got)
	}
}
