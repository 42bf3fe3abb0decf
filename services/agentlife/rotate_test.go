package agentlife

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// logsFolder makes agent x's logs folder, 0700 all the way, in a new
// HOME, and returns HOME and the folder.
func logsFolder(t *testing.T) (home, logs string) {
	t.Helper()
	home = testenv.Home(t)
	logs = filepath.Join(home, ".lnk", "agents", "x", "logs")
	if err := os.MkdirAll(logs, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".lnk", ".lnk/agents", ".lnk/agents/x"} {
		os.Chmod(filepath.Join(home, p), 0o700)
	}
	return home, logs
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestLogRotatesAtItsBound: a start's output past MaxLog rotates the
// log: harness.log, exactly MaxLog bytes, becomes harness.log.1 by one
// rename (the same file, the one before replaced, a link there replaced
// and never written through), the newest bytes are in a new harness.log,
// and harness.start says the start's first line is in harness.log.1;
// after a second rotation, that it is its first. Nothing is lost between
// the two files, and no file passes MaxLog.
func TestLogRotatesAtItsBound(t *testing.T) {
	home, logs := logsFolder(t)
	log, prev, start := filepath.Join(logs, "harness.log"), filepath.Join(logs, "harness.log.1"), filepath.Join(logs, "harness.start")
	before := "before this start\n"
	os.WriteFile(log, []byte(before), 0o600)
	victim := filepath.Join(home, ".zshrc")
	os.WriteFile(victim, []byte("mine\n"), 0o600)
	if err := os.Symlink(victim, prev); err != nil { // the previous file's place, taken by a link
		t.Fatal(err)
	}
	var warned []string
	l, err := openLog(home, "x", "harness", func(s string) { warned = append(warned, s) })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { l.Close() }()
	readStart := func() string { b, _ := os.ReadFile(start); return string(b) }
	if got := readStart(); got != fmt.Sprint(len(before)) {
		t.Fatalf("harness.start %q, want %d", got, len(before))
	}
	// Lines of 100 bytes, in writes of 64 KiB as the copy's: the bound
	// falls inside a line.
	var all bytes.Buffer
	all.WriteString(before)
	line := func(n int) []byte { return []byte(fmt.Sprintf("line %09d %s\n", n, strings.Repeat("x", 84))) }
	n := 0
	var pending []byte
	write := func(upTo int64) {
		for int64(all.Len()) < upTo {
			for len(pending) < 64<<10 {
				pending = append(pending, line(n)...)
				n++
			}
			chunk := pending[:min(64<<10, upTo-int64(all.Len()))]
			pending = pending[len(chunk):]
			all.Write(chunk)
			if k, err := l.Write(chunk); err != nil || k != len(chunk) {
				t.Fatalf("write: %d, %v", k, err)
			}
		}
	}
	write(MaxLog - 1000)
	if _, err := os.Lstat(prev); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(prev); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("rotated before the bound")
	}
	first := inode(t, log)
	write(MaxLog + 3<<20)
	if b, _ := os.ReadFile(victim); string(b) != "mine\n" {
		t.Fatalf("written through the link at harness.log.1: %q", b)
	}
	fi, err := os.Lstat(prev)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != MaxLog || inode(t, prev) != first {
		t.Fatalf("harness.log.1: %v, %v; want the log's own file (inode %d), %d bytes", fi, err, first, MaxLog)
	}
	a, _ := os.ReadFile(prev)
	b, _ := os.ReadFile(log)
	if !bytes.Equal(append(a, b...), all.Bytes()) {
		t.Fatalf("the two files (%d + %d bytes) are not what was written (%d)", len(a), len(b), all.Len())
	}
	if got := readStart(); got != fmt.Sprintf("1:%d", len(before)) {
		t.Fatalf("harness.start %q after a rotation, want 1:%d", got, len(before))
	}
	if fi, _ := os.Lstat(log); fi.Mode().Perm() != 0o600 {
		t.Fatalf("the new log's mode %v", fi.Mode())
	}
	// A second rotation: the first file is gone, replaced by the second.
	second := inode(t, log)
	write(2*MaxLog + 1<<20)
	write(int64(all.Len() + bytes.IndexByte(pending, '\n') + 1)) // to a line's end
	if inode(t, prev) != second {
		t.Fatal("harness.log.1 is not the second file")
	}
	b, _ = os.ReadFile(log)
	a, _ = os.ReadFile(prev)
	if len(a) != MaxLog || !bytes.HasSuffix(all.Bytes(), append(a, b...)) {
		t.Fatalf("after two rotations: %d + %d bytes, not the newest written", len(a), len(b))
	}
	if last := all.Bytes()[bytes.LastIndexByte(all.Bytes()[:all.Len()-1], '\n')+1:]; !bytes.HasSuffix(b, last) || !bytes.HasPrefix(last, []byte("line ")) {
		t.Fatalf("the log's last line is not the newest, %q", last)
	}
	if got := readStart(); got != "1:0" {
		t.Fatalf("harness.start %q after two rotations, want 1:0", got)
	}
	if len(warned) != 0 {
		t.Fatalf("warned: %q", warned)
	}
}

// TestLogRotatedAtAStart: a log already at its bound when a start opens
// it is rotated first, and the start begins the new file.
func TestLogRotatedAtAStart(t *testing.T) {
	home, logs := logsFolder(t)
	log := filepath.Join(logs, "harness.log")
	if err := os.WriteFile(log, bytes.Repeat([]byte("o\n"), MaxLog/2), 0o600); err != nil {
		t.Fatal(err)
	}
	old := inode(t, log)
	l, err := openLog(home, "x", "harness", nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Write([]byte("new\n"))
	l.Close()
	if inode(t, filepath.Join(logs, "harness.log.1")) != old {
		t.Fatal("the full log was not kept as harness.log.1")
	}
	if b, _ := os.ReadFile(log); string(b) != "new\n" {
		t.Fatalf("the new log %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(logs, "harness.start")); string(b) != "0" {
		t.Fatalf("harness.start %q, want 0", b)
	}
}

// TestHarnessOutputRotatesTheLog: a real start whose harness prints past
// twice MaxLog: the supervisor's copy rotates the log, neither file
// passes MaxLog, the newest lines are in harness.log, and lnk agent logs
// shows them, whole and in order, with none from before the start.
func TestHarnessOutputRotatesTheLog(t *testing.T) {
	w := newWorld(t, "spew", "spew")
	if err := os.MkdirAll(filepath.Dir(w.logPath()), 0o700); err == nil {
		os.WriteFile(w.logPath(), []byte("before the start: old-secret\n"), 0o600)
	}
	w.mustLnk("agent", "start", w.agent)
	w.waitFor("the harness done printing", func() bool { return strings.Contains(w.tail(), "spew done\n") })
	w.mustLnk("agent", "stop", w.agent)
	for _, p := range []string{w.logPath(), w.logPath() + ".1"} {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxLog || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v; want a 0600 file of at most %d bytes", p, fi, err, MaxLog)
		}
	}
	if fi, _ := os.Lstat(w.logPath() + ".1"); fi.Size() != MaxLog {
		t.Fatalf("harness.log.1 holds %d bytes, want the bound, %d", fi.Size(), MaxLog)
	}
	out := w.mustLnk("agent", "logs", w.agent)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := 3*MaxLog/1000 - 1
	if len(lines) < 2 || lines[len(lines)-1] != "spew done" && !strings.HasPrefix(lines[len(lines)-1], "lnk: ") {
		t.Fatalf("lnk agent logs ends %q", lines[max(0, len(lines)-3):])
	}
	seen := -1
	for _, l := range lines {
		if strings.Contains(l, "old-secret") {
			t.Fatal("lnk agent logs shows a line from before the start")
		}
		var n int
		if _, err := fmt.Sscanf(l, "spew %d ", &n); err != nil {
			continue
		}
		if len(l) != 999 || seen >= 0 && n != seen+1 {
			t.Fatalf("line %q after spew %d", l[:min(len(l), 40)], seen)
		}
		seen = n
	}
	if seen != last {
		t.Fatalf("the last spew line shown is %d, want %d", seen, last)
	}
}

// tail is the log's last 4 KiB.
func (w *world) tail() string {
	f, err := os.Open(w.logPath())
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, max(0, fi.Size()-4096))
	return string(b[:n])
}
