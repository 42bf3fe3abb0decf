package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// TestAgentLogsAcrossARotation: with the start in harness.log.1 (its
// offset there, "1:N" in harness.start), lnk agent logs shows the start's
// lines from there on and then harness.log's, a line cut between the two
// whole, and nothing from before the start; a harness.log.1 that is a
// link is refused, and one gone leaves harness.log shown from its start.
func TestAgentLogsAcrossARotation(t *testing.T) {
	home, dir := logsAgent(t)
	before := "before the start: old-secret\n"
	prev, log, start := filepath.Join(dir, "harness.log.1"), filepath.Join(dir, "harness.log"), filepath.Join(dir, "harness.start")
	os.WriteFile(prev, []byte(before+"started\nhalf of a li"), 0o600)
	os.WriteFile(log, []byte("ne\nnewest\n"), 0o600)
	os.WriteFile(start, []byte("1:"+itoa(len(before))), 0o600)
	code, out, errs := runLnk(t, "agent", "logs", "a")
	if code != 0 || out != "started\nhalf of a line\nnewest\n" {
		t.Fatalf("code %d, out %q, err %q", code, out, errs)
	}
	// The same start in the log itself: its lines alone.
	os.WriteFile(start, []byte("3"), 0o600)
	if code, out, _ := runLnk(t, "agent", "logs", "a"); code != 0 || out != "newest\n" {
		t.Fatalf("a start in the log: code %d, out %q", code, out)
	}
	os.WriteFile(start, []byte("1:"+itoa(len(before))), 0o600)
	notes := filepath.Join(home, "notes.txt")
	os.WriteFile(notes, []byte("private notes\n"), 0o600)
	os.Remove(prev)
	os.Symlink(notes, prev)
	code, out, errs = runLnk(t, "agent", "logs", "a")
	if code != ExitRefused || strings.Contains(out, "private") || !strings.Contains(errs, "harness.log.1") || !strings.Contains(errs, "hint:") {
		t.Fatalf("a previous file that is a link: code %d, out %q, err %q", code, out, errs)
	}
	os.Remove(prev)
	code, out, errs = runLnk(t, "agent", "logs", "a")
	if code != 0 || out != "ne\nnewest\n" || !strings.Contains(errs, "gone") {
		t.Fatalf("the previous file gone: code %d, out %q, err %q", code, out, errs)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestAgentLogsFollowsARotation: lnk agent logs --follow, while the log
// is rotated as the supervisor does (renamed to harness.log.1, a new
// harness.log), shows what the old file got last and goes on in the new.
func TestAgentLogsFollowsARotation(t *testing.T) {
	_, dir := logsAgent(t)
	lnk := testenv.Bin(t, "lnk")
	log := filepath.Join(dir, "harness.log")
	appendLog(t, dir, "harness", true, "first\n")
	cmd := exec.Command(lnk, "agent", "logs", "a", "--follow")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	want := func(s string) {
		t.Helper()
		select {
		case l := <-lines:
			if l != s {
				t.Fatalf("followed %q, want %q", l, s)
			}
		case <-time.After(time.Minute):
			t.Fatalf("--follow never showed %q", s)
		}
	}
	want("first")
	appendLog(t, dir, "harness", false, "last of the old")
	if err := os.Rename(log, log+".1"); err != nil {
		t.Fatal(err)
	}
	appendLog(t, dir, "harness", false, " file\nin the new\n")
	want("last of the old file")
	want("in the new")
	appendLog(t, dir, "harness", false, "more\n")
	want("more")
}
