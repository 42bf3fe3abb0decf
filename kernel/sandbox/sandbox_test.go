package sandbox_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/sandbox"
)

func TestReadsGrantedFolderNotSSH(t *testing.T) {
	w := newWorld(t)
	c := compile(t, w, caps.Grants{Read: []string{w.data}, Commands: []string{"sh", "cat"}})
	code, out, errs := run(t, c, sandbox.Options{}, "sh", "-c",
		`cat "$1/f"; echo; cat "$HOME/.ssh/id_test" && echo SSH-READ; cat "$HOME/.lnk/settings" && echo LNK-READ; exit 0`, "sh", w.data)
	if code != 0 || !strings.Contains(out, "granted-content") {
		t.Fatalf("code %d, out %q, err %q", code, out, errs)
	}
	if strings.Contains(out, "READ") || strings.Contains(out, "secret") {
		t.Fatalf("the sandbox read a hidden file: %q", out)
	}
}

func TestExitCodesAndSignalsForwarded(t *testing.T) {
	w := newWorld(t)
	c := compile(t, w, caps.Grants{Commands: []string{"sh"}})
	if code, _, errs := run(t, c, sandbox.Options{}, "sh", "-c", "exit 7"); code != 7 {
		t.Fatalf("exit 7 came back as %d (%s)", code, errs)
	}
	if code, _, errs := run(t, c, sandbox.Options{}, "sh", "-c", "kill -TERM $$"); code != 128+15 {
		t.Fatalf("SIGTERM came back as %d, want 143 (%s)", code, errs)
	}
}

func TestNotACommandIsRefused(t *testing.T) {
	w := newWorld(t)
	c := compile(t, w, caps.Grants{Commands: []string{"sh"}})
	_, err := sandbox.Build(c, sandbox.Options{Argv: []string{"id"}, InitPath: "/nonexistent"})
	if !errors.Is(err, sandbox.ErrNotACommand) {
		t.Fatalf("got %v, want ErrNotACommand", err)
	}
	// Inside, a program not listed does not start either (landlock).
	code, out, _ := run(t, c, sandbox.Options{}, "sh", "-c", "id && echo RAN; exit 0")
	if code != 0 || strings.Contains(out, "RAN") {
		t.Fatalf("an unlisted program ran: code %d, out %q", code, out)
	}
}

// TestSymlinkSwapBetweenCheckAndBindIsRefused: caps checks the folder;
// then it becomes a link to ~/.ssh. The bind comes from an fd opened
// without following links, so the sandbox refuses to start.
func TestSymlinkSwapBetweenCheckAndBindIsRefused(t *testing.T) {
	w := newWorld(t)
	c := compile(t, w, caps.Grants{Read: []string{w.data}, Commands: []string{"sh"}})
	if err := os.Rename(w.data, w.data+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(w.home, ".ssh"), w.data); err != nil {
		t.Fatal(err)
	}
	_, err := sandbox.Build(c, sandbox.Options{Argv: []string{"sh"}, InitPath: testenv.Bin(t, "lnk-init")})
	if !errors.Is(err, sandbox.ErrFolderChanged) {
		t.Fatalf("got %v, want ErrFolderChanged", err)
	}
}

// TestFolderMovedIntoPlaceBetweenCheckAndBindIsRefused: caps checks the
// folder; then the owner's ~/.ssh, a real folder and no link, is moved
// into its place. The bind is of the folder caps checked (its device and
// inode), so the sandbox refuses to start.
func TestFolderMovedIntoPlaceBetweenCheckAndBindIsRefused(t *testing.T) {
	w := newWorld(t)
	c := compile(t, w, caps.Grants{Read: []string{w.data}, Commands: []string{"sh"}})
	if err := os.Rename(w.data, w.data+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(w.home, ".ssh"), w.data); err != nil {
		t.Fatal(err)
	}
	_, err := sandbox.Build(c, sandbox.Options{Argv: []string{"sh"}, InitPath: testenv.Bin(t, "lnk-init")})
	if !errors.Is(err, sandbox.ErrFolderChanged) {
		t.Fatalf("got %v, want ErrFolderChanged", err)
	}
}

// TestBackgroundLoopDiesWithSandbox: a loop left running in the
// background is gone once the command exits.
func TestBackgroundLoopDiesWithSandbox(t *testing.T) {
	w := newWorld(t)
	c := compile(t, w, caps.Grants{Commands: []string{"sh", "sleep"}})
	mark := fmt.Sprintf("%d.%d", 100000+os.Getpid(), time.Now().UnixNano()%1000000)
	code, _, errs := run(t, c, sandbox.Options{}, "sh", "-c", "(while :; do sleep "+mark+"; done) & sleep "+mark+" & exit 0")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		left := processesWith(mark)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes outlived the sandbox: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// processesWith lists the pids of `sleep s`.
func processesWith(s string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Equal(b, []byte("sleep\x00"+s+"\x00")) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestHiddenStaysHiddenUnderAGrantedHome: with the whole home granted
// read-only, ~/.lnk, ~/Link/History and the owner's memory service's
// folder (~/Link/Agents/.memory/<owner>: its log and socket) are still
// not there.
func TestHiddenStaysHiddenUnderAGrantedHome(t *testing.T) {
	w := newWorld(t)
	hist := filepath.Join(w.home, "Link", "History")
	if err := os.MkdirAll(hist, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(hist, "old"), "old-agent-secret")
	mem := filepath.Join(w.home, "Link", "Agents", ".memory", "owner")
	if err := os.MkdirAll(mem, 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mem, "memory.log"), "memory-service-secret")
	f := false
	c := compile(t, w, caps.Grants{Read: []string{w.home}, Internet: &f})
	code, out, errs := run(t, c, sandbox.Options{}, "sh", "-c",
		`cat "$1/data/f"; echo; cat "$1/.lnk/settings"; cat "$1/Link/History/old"; cat "$1/Link/Agents/.memory/owner/memory.log"; ls -a "$1/.lnk" "$1/Link/Agents"; exit 0`, "sh", w.home)
	if code != 0 || !strings.Contains(out, "granted-content") {
		t.Fatalf("code %d, out %q, err %q", code, out, errs)
	}
	if strings.Contains(out, "secret") {
		t.Fatalf("a hidden file was read under the granted home: %q", out)
	}
}
