package cli

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// logsAgent makes agent a and returns its logs folder.
func logsAgent(t *testing.T) (home, dir string) {
	t.Helper()
	home = testenv.Home(t)
	if code, _, errs := runLnk(t, "agent", "create", "a"); code != 0 {
		t.Fatal(errs)
	}
	return home, caps.Layout{Home: home}.LogsDir("a")
}

// appendLog appends to the log as the supervisor does, and with start
// records the log's size before it as the last start's offset.
func appendLog(t *testing.T, dir, name string, start bool, data string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if start {
		st, _ := f.Stat()
		if err := os.WriteFile(filepath.Join(dir, name+".start"), []byte(strconv.FormatInt(st.Size(), 10)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteString(data); err != nil {
		t.Fatal(err)
	}
}

// TestAgentLogsSinceTheLastStart: lines before the recorded offset are
// not shown, even one the harness printed to look like a start; escape
// sequences and control characters are gone; the agent's harness names
// the log, and --harness another.
func TestAgentLogsSinceTheLastStart(t *testing.T) {
	home, dir := logsAgent(t)
	appendLog(t, dir, "harness", true, "first run: old-secret\n")
	appendLog(t, dir, "harness", true, "== lnk: started ==\n\x1b[2J\x1b]0;owned\x07hello \x1b[1mworld\x1b[0m\r\n\x07tab\there\n")
	code, out, errs := runLnk(t, "agent", "logs", "a")
	if code != 0 || out != "== lnk: started ==\nhello world\ntab\there\n" {
		t.Fatalf("code %d, out %q, err %q", code, out, errs)
	}
	// Another start: only what follows it.
	appendLog(t, dir, "harness", true, "second\n")
	if _, out, _ := runLnk(t, "agent", "logs", "a"); out != "second\n" {
		t.Fatalf("after a restart: %q", out)
	}
	// The agent's harness names its log; --harness names another.
	if err := caps.SetHarness(home, "a", "claude"); err != nil {
		t.Fatal(err)
	}
	appendLog(t, dir, "claude", true, "from claude\n")
	if _, out, _ := runLnk(t, "agent", "logs", "a"); out != "from claude\n" {
		t.Fatalf("the agent's harness's log: %q", out)
	}
	if _, out, _ := runLnk(t, "agent", "logs", "a", "--harness", "harness"); out != "second\n" {
		t.Fatalf("--harness harness: %q", out)
	}
	if code, _, errs := runLnk(t, "agent", "logs", "a", "--harness", "../x"); code != ExitUsage || !strings.Contains(errs, "hint:") {
		t.Fatalf("a bad --harness: %d %q", code, errs)
	}
	if code, _, errs := runLnk(t, "agent", "logs", "nope"); code != ExitMissing {
		t.Fatalf("no such agent: %d %q", code, errs)
	}
	// A start file that isn't a decimal offset refuses (lines from before
	// the start must never show on a guess).
	os.WriteFile(filepath.Join(dir, "claude.start"), []byte("12 # start\n"), 0o600)
	if code, out, errs := runLnk(t, "agent", "logs", "a"); code != ExitRefused || out != "" || !strings.Contains(errs, "hint:") {
		t.Fatalf("a malformed start: %d %q %q", code, out, errs)
	}
}

// TestAgentLogsRefusesALink: a log that is a link (to a file the owner
// can read), a FIFO, a log folder that is a link, and a start file that
// is a link are refused, with a hint; the same log as a regular file is
// shown (the positive control).
func TestAgentLogsRefusesALink(t *testing.T) {
	home, dir := logsAgent(t)
	elsewhere := filepath.Join(home, "notes.txt")
	os.WriteFile(elsewhere, []byte("private notes\n"), 0o600)
	log := filepath.Join(dir, "harness.log")
	check := func(what string, wantCode int) {
		t.Helper()
		code, out, errs := runLnk(t, "agent", "logs", "a")
		if code != wantCode {
			t.Fatalf("%s: code %d, want %d; out %q err %q", what, code, wantCode, out, errs)
		}
		if wantCode != 0 && (strings.Contains(out, "private") || !strings.Contains(errs, "hint:")) {
			t.Fatalf("%s: out %q err %q", what, out, errs)
		}
		if wantCode == 0 && out != "private notes\n" {
			t.Fatalf("%s: %q", what, out)
		}
	}
	os.Symlink(elsewhere, log)
	check("a log that is a link", ExitRefused)
	os.Remove(log)
	if err := unix.Mkfifo(log, 0o600); err != nil {
		t.Fatal(err)
	}
	check("a fifo", ExitRefused)
	os.Remove(log)
	b, _ := os.ReadFile(elsewhere)
	os.WriteFile(log, b, 0o600)
	check("a regular log", 0)
	os.Symlink(filepath.Join(home, "zero"), filepath.Join(dir, "harness.start"))
	os.WriteFile(filepath.Join(home, "zero"), []byte("0\n"), 0o600)
	check("a start file that is a link", ExitRefused)
	os.Remove(filepath.Join(dir, "harness.start"))
	os.Chmod(log, 0o666)
	check("a log others may write", ExitRefused)
	os.Chmod(log, 0o600)
	moved := dir + ".real"
	os.Rename(dir, moved)
	os.Symlink(moved, dir)
	check("a logs folder that is a link", ExitRefused)
	os.Remove(dir)
	os.Rename(moved, dir)
	check("the folder back", 0)
}

// maxRSS is the child's peak resident memory, in bytes.
func maxRSS(p *os.ProcessState) int64 {
	return p.SysUsage().(*syscall.Rusage).Maxrss * 1024
}

// TestAgentLogsBoundedMemory runs the lnk binary: the tail of a log
// holding a 100 MB line without a newline, and --follow while 100 MB of
// binary data and escape sequences are appended, each stay under a
// memory bound far below the log's size (the child's peak RSS), print
// clean lines of at most 64 KiB, and --follow stops cleanly on SIGINT.
func TestAgentLogsBoundedMemory(t *testing.T) {
	_, dir := logsAgent(t)
	lnk := testenv.Bin(t, "lnk")
	const total = 100 << 20
	const bound = 64 << 20
	block := bytes.Repeat([]byte("x"), 1<<20)
	appendLog(t, dir, "harness", true, "")
	f, err := os.OpenFile(filepath.Join(dir, "harness.log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for n := 0; n < total; n += len(block) {
		f.Write(block)
	}
	cmd := exec.Command(lnk, "agent", "logs", "a")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if rss := maxRSS(cmd.ProcessState); rss > bound {
		t.Fatalf("the tail of a %d-byte line took %d bytes of memory", total, rss)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if out.Len() > 4<<20+len(lines) || len(lines) != 64 || len(lines[0]) != 64<<10 {
		t.Fatalf("tail: %d bytes in %d lines", out.Len(), len(lines))
	}

	// --follow, while the harness writes binary data and escapes, no newline.
	cmd = exec.Command(lnk, "agent", "logs", "a", "--follow")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	got := make(chan [4]int64, 1) // bytes, longest line, control characters, y's
	sawEnd, sawTail := make(chan struct{}), make(chan struct{})
	go func() {
		r := bufio.NewReaderSize(stdout, 1<<20)
		var n, run, longest, bad, ys int64
		var last uint32
		for {
			b, err := r.ReadByte()
			if err != nil {
				break
			}
			n++
			if n == 63*(64<<10+1) { // the tail's whole pieces: the last waits for its line's end
				close(sawTail)
			}
			run++
			last = last<<8 | uint32(b)
			switch {
			case b == '\n':
				run = 0
				if last == 'E'<<24|'N'<<16|'D'<<8|'\n' {
					close(sawEnd)
				}
			case b == 'y':
				ys++
			case b < 0x20 && b != '\t' || b == 0x7f:
				bad++
			}
			longest = max(longest, run-1)
		}
		got <- [4]int64{n, longest, bad, ys}
	}()
	// Each piece of junk shows as U+FFFD U+FFFD "1my": the NUL, the CSI
	// and the OSC go, the bad bytes are replaced (a raw 0x9b is not
	// UTF-8's U+009B, so its "1m" is text).
	select {
	case <-sawTail:
	case <-time.After(time.Minute):
		t.Fatal("follow did not show the tail")
	}
	junk := bytes.Repeat([]byte("\x00\x1b[31m\xff\x9b1m\x1b]0;t\x07y"), (1<<20)/19)
	pieces := int64(0)
	for n := 0; n < total; n += len(junk) {
		f.Write(junk)
		pieces += (1 << 20) / 19
	}
	f.Write([]byte("\nEND\n"))
	select {
	case <-sawEnd:
	case <-time.After(3 * time.Minute):
		t.Fatal("follow did not show the end of what was appended")
	}
	cmd.Process.Signal(os.Interrupt)
	var res [4]int64
	select {
	case res = <-got:
	case <-time.After(time.Minute):
		t.Fatal("follow did not stop on SIGINT")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("follow ended with %v on SIGINT", err)
	}
	if rss := maxRSS(cmd.ProcessState); rss > bound {
		t.Fatalf("following %d bytes without a newline took %d bytes of memory", total, rss)
	}
	if res[1] > 64<<10 || res[2] != 0 || res[3] != pieces {
		t.Fatalf("follow wrote %d bytes, longest line %d, %d control characters, %d of %d pieces", res[0], res[1], res[2], res[3], pieces)
	}
}
