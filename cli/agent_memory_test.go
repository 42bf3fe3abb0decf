package cli

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/memory/memsock"
)

// lnk agent memory stop ends the owner's running service and leaves the
// index: read back after the stop; with none running it says so.
func TestAgentMemoryStopLeavesTheIndex(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	home := testenv.Home(t)
	a, err := caps.CreateAgent(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testenv.Bin(t, "lnk-memory"), "serve", "--owner", a.Owner, "--agent", a.ID+"=ada", "--idle", "1m")
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/bin:/bin"}
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	sock := filepath.Join(home, "Link", "Agents", ".memory", a.Owner, "run", memsock.SocketName)
	for i := 0; ; i++ {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
			break
		}
		if i == 200 {
			t.Fatalf("the service never listened: %v\n%s", err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, stdout, stderr := runLnk(t, "agent", "memory", "stop", "ada")
	if code != ExitOK || !strings.Contains(stdout, "service stopped") {
		t.Fatalf("stop: exit %d\n%s%s", code, stdout, stderr)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the service ended with %v\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the service still runs after lnk agent memory stop")
	}
	ents, err := os.ReadDir(filepath.Join(home, "Link", "Agents", "ada", "Agent", "memory"))
	if err != nil || len(ents) == 0 {
		t.Fatalf("the memory folder after the stop: %v %v", ents, err)
	}
	idx, err := filepath.Glob(filepath.Join(home, "Link", "Agents", "ada", "Agent", "memory", "*", "index.db"))
	if err != nil || len(idx) != 1 {
		t.Fatalf("the index after the stop: %v %v", idx, err)
	}
	if code, stdout, _ := runLnk(t, "agent", "memory", "stop"); code != ExitOK || !strings.Contains(stdout, "was not running") {
		t.Errorf("a stop with none running: exit %d, %s", code, stdout)
	}
	if code, _, stderr := runLnk(t, "agent", "memory", "stop", "nope"); code != ExitMissing || !strings.Contains(stderr, "hint: ") {
		t.Errorf("stop for no agent: exit %d, %s", code, stderr)
	}
}

// lnk agent show --instructions shows the instructions and the notes as
// the prompt has them, the notes cleaned of escapes; a notes file that is
// a link is left out and said, never followed.
func TestAgentShowInstructionsShowsTheNotes(t *testing.T) {
	home := testenv.Home(t)
	if _, err := caps.CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(home, "Link", "Agents", "ada", "Agent")
	os.MkdirAll(filepath.Join(own, "instructions"), 0o700)
	os.MkdirAll(filepath.Join(own, "memory"), 0o700)
	os.WriteFile(filepath.Join(own, "instructions", "instruction.md"), []byte("Answer in French.\n"), 0o600)
	os.WriteFile(filepath.Join(own, "memory", "notes.md"), []byte("- the cat is Tom\x1b[2J\u009b31m\n"), 0o600)
	code, out, errs := runLnk(t, "agent", "show", "ada", "--instructions")
	if code != ExitOK || !strings.Contains(out, "Answer in French.") || !strings.Contains(out, "- the cat is Tom[2J\n") || strings.ContainsAny(out, "\x1b\u009b") {
		t.Fatalf("exit %d:\n%q%s", code, out, errs)
	}
	secret := filepath.Join(home, "secret.txt")
	os.WriteFile(secret, []byte("the owner's secret\n"), 0o600)
	os.Remove(filepath.Join(own, "memory", "notes.md"))
	os.Symlink(secret, filepath.Join(own, "memory", "notes.md"))
	code, out, errs = runLnk(t, "agent", "show", "ada", "--instructions")
	if code != ExitOK || strings.Contains(out, "secret") && !strings.Contains(out, "left out") || strings.Contains(out, "the owner's secret") || !strings.Contains(out, "left out: memory/notes.md") {
		t.Fatalf("notes through a link: exit %d:\n%s%s", code, out, errs)
	}
	if code, _, errs := runLnk(t, "agent", "show", "ada", "--instructions", "--permissions"); code != ExitUsage {
		t.Errorf("--instructions with --permissions: exit %d %s", code, errs)
	}
}
