package agentlife

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fill makes path a log of size bytes of lines, 0600.
func fill(t *testing.T, path string, size int) {
	t.Helper()
	line := strings.Repeat("x", 99) + "\n"
	b := []byte(strings.Repeat(line, size/len(line)+1)[:size])
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func size(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestAppendLinePastTheBoundRotates: a line of the supervisor's own
// outside a start (appendLine: between starts, the way in's) that would
// take the log past MaxLog rotates it first, as a start's output does
// (the line kept whole in the new file):
// harness.log (the same file) becomes harness.log.1, the line begins the
// new harness.log, and harness.start follows the last start's lines
// ("1:" its offset; after a second rotation, "1:0"). A line that fits is
// appended with no rotation (the control). With no start recorded the
// log rotates and none is made; with a start file that cannot be read (a
// link) the log is not rotated, the line is dropped and that said, and
// no file passes MaxLog.
func TestAppendLinePastTheBoundRotates(t *testing.T) {
	home, logs := logsFolder(t)
	log, prev, start := filepath.Join(logs, "harness.log"), filepath.Join(logs, "harness.log.1"), filepath.Join(logs, "harness.start")
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	fill(t, log, MaxLog-40)
	os.WriteFile(start, []byte("100"), 0o600)
	first := inode(t, log)

	if err := appendLine(home, "x", "harness", "lnk: fits\n", warn); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(prev); !os.IsNotExist(err) || size(t, log) != MaxLog-30 {
		t.Fatalf("a line that fits: harness.log.1 %v, harness.log %d bytes, want no rotation and %d", err, size(t, log), MaxLog-30)
	}
	line := "lnk: agent x's way in refused a connection: not its key\n"
	if err := appendLine(home, "x", "harness", line, warn); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(log); string(got) != line {
		t.Fatalf("harness.log after the line past the bound: %d bytes ending %q, want the line alone", len(got), got[max(0, len(got)-80):])
	}
	if inode(t, prev) != first || size(t, prev) != MaxLog-30 {
		t.Fatalf("harness.log.1 is not the log it was (%d bytes)", size(t, prev))
	}
	if got, _ := os.ReadFile(start); string(got) != "1:100" {
		t.Fatalf("harness.start %q, want 1:100", got)
	}
	// Again: the start's first lines are gone, its oldest kept are
	// harness.log.1's first.
	fill(t, log, MaxLog-5)
	appendLine(home, "x", "harness", line, warn)
	if got, _ := os.ReadFile(start); string(got) != "1:0" || size(t, prev) != MaxLog-5 {
		t.Fatalf("after a second rotation: harness.start %q, harness.log.1 %d bytes", got, size(t, prev))
	}

	// No start recorded: rotated, none made.
	os.Remove(start)
	fill(t, log, MaxLog-5)
	appendLine(home, "x", "harness", line, warn)
	if _, err := os.Lstat(start); !os.IsNotExist(err) || size(t, prev) != MaxLog-5 || size(t, log) != int64(len(line)) {
		t.Fatalf("with no start: harness.start %v, harness.log.1 %d, harness.log %d bytes", err, size(t, prev), size(t, log))
	}

	// A start file that is a link: not rotated, the line dropped, said.
	os.Symlink(filepath.Join(home, "elsewhere"), start)
	fill(t, log, MaxLog-5)
	held := inode(t, log)
	warned = nil
	appendLine(home, "x", "harness", line, warn)
	if size(t, log) != MaxLog-5 || inode(t, log) != held {
		t.Fatalf("with a link for a start file: harness.log %d bytes, rotated %v", size(t, log), inode(t, log) != held)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "the supervisor's line past 16 MiB is dropped") || !strings.Contains(warned[0], "harness.start") {
		t.Fatalf("the failure said: %q", warned)
	}
}

// TestSayGoesThroughTheStartsLog: while a start's output is copied, the
// supervisor's own lines (say, the way in's too) go through that start's
// writer, so past MaxLog it rotates the log and keeps the start's record
// ("1:" its offset), the line whole in the new file; once the copy has
// closed it, it writes no more.
func TestSayGoesThroughTheStartsLog(t *testing.T) {
	home, logs := logsFolder(t)
	log, prev, start := filepath.Join(logs, "harness.log"), filepath.Join(logs, "harness.log.1"), filepath.Join(logs, "harness.start")
	fill(t, log, 200)
	l, err := openLog(home, "x", "harness", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &supervisor{cfg: Config{Home: home, Agent: "x"}, cur: l}
	l.Write([]byte(strings.Repeat("y", MaxLog-201) + "\n")) // the log full
	s.say("lnk: the way in refused %s", "a stranger")
	if got, _ := os.ReadFile(log); string(got) != "lnk: the way in refused a stranger\n" {
		t.Fatalf("harness.log: %q", got)
	}
	// The harness's output goes on after the line, and the start's
	// record still names its first lines in harness.log.1 (a second
	// writer rotating the file from under the start's would have left it
	// holding the old file, and its next write naming the new one's end).
	l.Write([]byte("the harness goes on\n"))
	if got, _ := os.ReadFile(log); string(got) != "lnk: the way in refused a stranger\nthe harness goes on\n" {
		t.Fatalf("harness.log after the harness's next line: %q", got)
	}
	if got, _ := os.ReadFile(start); string(got) != "1:200" || size(t, prev) != MaxLog {
		t.Fatalf("harness.start %q, harness.log.1 %d bytes", got, size(t, prev))
	}
	l.Close()
	if l.WriteOpen([]byte("after\n")) {
		t.Fatal("a closed start's log written")
	}
}
