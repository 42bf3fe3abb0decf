package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/agentlife"
)

// TestBackupAndRestoreCommands runs lnk agent backup and restore: the
// backup names the archives it wrote; a restore while the agent runs (a
// real process holding its supervisor's lock, as a running supervisor
// does) is refused, exit 3, with the stop as its hint, and changes
// nothing; stopped, the restore puts the conversation back. An archive
// replaced by a link is refused, exit 3, with a hint.
func TestBackupAndRestoreCommands(t *testing.T) {
	home := testenv.Home(t)
	a, err := caps.CreateAgent(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	chat := filepath.Join(caps.Layout{Home: home}.OwnDir("main"), "chats", "c.jsonl")
	os.WriteFile(chat, []byte("{\"t\":\"backed up\"}\n"), 0o600)
	code, out, errs := runLnk(t, "agent", "backup", "main")
	if code != ExitOK || !strings.Contains(out, "backed up agent main") || !strings.Contains(out, filepath.Join(backupDirOf(home), "Agent.tar")) {
		t.Fatalf("backup: code %d\n%s%s", code, out, errs)
	}
	os.WriteFile(chat, []byte("{\"t\":\"changed\"}\n"), 0o600)

	// Running: a process holds the supervisor's lock.
	dir := filepath.Join(home, ".lnk", "agents", a.ID)
	os.MkdirAll(dir, 0o700)
	lock := filepath.Join(dir, agentlife.LockFile)
	os.WriteFile(lock, nil, 0o600)
	holder := exec.Command("flock", lock, "sleep", "300")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its sleep ends with it
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	end := func() { syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); holder.Wait() }
	defer end()
	waitRunning(t, home, a, true)
	code, _, errs = runLnk(t, "agent", "restore", "main")
	if code != ExitRefused || !strings.Contains(errs, "agent main runs") || !strings.Contains(errs, "hint: lnk agent stop main") {
		t.Fatalf("restore while running: code %d, %s", code, errs)
	}
	if b, _ := os.ReadFile(chat); string(b) != "{\"t\":\"changed\"}\n" {
		t.Errorf("a refused restore changed the conversation: %q", b)
	}
	end()
	// Its sleep, killed with it, lets the lock go as it ends.
	waitRunning(t, home, a, false)

	code, out, errs = runLnk(t, "agent", "restore", "main")
	if code != ExitOK || !strings.Contains(out, "restored agent main") {
		t.Fatalf("restore: code %d\n%s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(chat); string(b) != "{\"t\":\"backed up\"}\n" {
		t.Errorf("the conversation after the restore: %q", b)
	}

	// The archive replaced by a link to a copy of it: never opened.
	at := filepath.Join(backupDirOf(home), "Agent.tar")
	os.Rename(at, at+".real")
	os.Symlink(at+".real", at)
	code, _, errs = runLnk(t, "agent", "restore", "main")
	if code != ExitRefused || !strings.Contains(errs, "is a link") || !strings.Contains(errs, "hint: lnk agent backup main") {
		t.Fatalf("an archive that is a link: code %d, %s", code, errs)
	}
	// Each refusal in the audit log once, with its reason.
	log, err := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	for _, why := range []string{"agent main runs", "Agent.tar is a link"} {
		if n := strings.Count(string(log), why); err != nil || n != 1 {
			t.Errorf("%q is logged %d times (%v):\n%s", why, n, err, log)
		}
	}
}

func backupDirOf(home string) string {
	return filepath.Join(caps.Layout{Home: home}.FilesDir("main"), ".lnk-backup")
}

// waitRunning waits until agent a's status says running (or not).
func waitRunning(t *testing.T, home string, a *caps.Agent, running bool) {
	t.Helper()
	for i := 0; ; i++ {
		st, err := agentlife.ReadStatus(home, a)
		if err == nil && st.Running == running {
			return
		}
		if i > 1000 {
			t.Fatalf("the agent's status never said running = %v: %v", running, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStartRemovesAStaleRestoringFolder: lnk agent start removes a
// .restoring-* a restore cut short left over a week ago, and keeps one
// of today (a restore maybe under way). The start itself is then
// refused by the machine's rule, after the sweep.
func TestStartRemovesAStaleRestoringFolder(t *testing.T) {
	home := testenv.Home(t)
	os.MkdirAll(filepath.Join(home, ".lnk"), 0o700)
	os.WriteFile(filepath.Join(home, ".lnk", "machine.toml"), []byte("unsandboxed = false\n"), 0o600)
	if _, err := caps.CreateAgent(home, "main"); err != nil {
		t.Fatal(err)
	}
	agents := caps.Layout{Home: home}.Agents()
	old, fresh := filepath.Join(agents, ".restoring-old"), filepath.Join(agents, ".restoring-fresh")
	for _, d := range []string{old, fresh} {
		os.MkdirAll(filepath.Join(d, "home"), 0o700)
		os.WriteFile(filepath.Join(d, "home", "x"), []byte("left"), 0o600)
	}
	week := time.Now().Add(-8 * 24 * time.Hour)
	os.Chtimes(old, week, week)
	code, _, errs := runLnk(t, "agent", "start", "main", "--no-sandbox")
	if code == ExitOK || !strings.Contains(errs, "unsandboxed") {
		t.Fatalf("start: code %d, %s", code, errs)
	}
	if _, err := os.Lstat(old); !os.IsNotExist(err) {
		t.Errorf("%s: %v, want it removed", old, err)
	}
	if _, err := os.Lstat(fresh); err != nil {
		t.Errorf("%s: %v, want it kept", fresh, err)
	}
}

// TestBackupRefusedWhileRunning: a backup of a running agent (a real
// process holding its supervisor's lock, as a running supervisor does)
// is refused, exit 3, saying why, with the stop and --running as its
// hints, logged once, and writes nothing; with --running it is written,
// with a warning that it may be mid-change; stopped, it is written with
// no warning.
func TestBackupRefusedWhileRunning(t *testing.T) {
	home := testenv.Home(t)
	a, err := caps.CreateAgent(home, "main")
	if err != nil {
		t.Fatal(err)
	}
	chat := filepath.Join(caps.Layout{Home: home}.OwnDir("main"), "chats", "c.jsonl")
	os.WriteFile(chat, []byte("{\"t\":\"half\"}\n"), 0o600)
	dir := filepath.Join(home, ".lnk", "agents", a.ID)
	os.MkdirAll(dir, 0o700)
	lock := filepath.Join(dir, agentlife.LockFile)
	os.WriteFile(lock, nil, 0o600)
	holder := exec.Command("flock", lock, "sleep", "300")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	end := func() { syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); holder.Wait() }
	defer end()
	waitRunning(t, home, a, true)

	code, out, errs := runLnk(t, "agent", "backup", "main", "--local")
	if code != ExitRefused || !strings.Contains(errs, "lnk: refused: agent main runs: a backup now could catch") ||
		!strings.Contains(errs, "hint: lnk agent stop main first") || !strings.Contains(errs, "hint: lnk agent backup main --running") {
		t.Fatalf("backup while running: code %d\n%s%s", code, out, errs)
	}
	if _, err := os.Lstat(backupDirOf(home)); !os.IsNotExist(err) {
		t.Fatalf("a refused backup wrote %s: %v", backupDirOf(home), err)
	}
	log, _ := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if n := strings.Count(string(log), "agent main runs: a backup now"); n != 1 {
		t.Errorf("the refusal is logged %d times:\n%s", n, log)
	}

	code, out, errs = runLnk(t, "agent", "backup", "main", "--local", "--running")
	if code != ExitOK || !strings.Contains(out, "backed up agent main") || !strings.Contains(errs, "warning: agent main runs: this backup may catch") {
		t.Fatalf("backup --running: code %d\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(backupDirOf(home), "Agent.tar")); err != nil {
		t.Fatalf("backup --running wrote no Agent.tar: %v", err)
	}

	end()
	waitRunning(t, home, a, false)
	code, out, errs = runLnk(t, "agent", "backup", "main", "--local")
	if code != ExitOK || !strings.Contains(out, "backed up agent main") || strings.Contains(errs, "warning") {
		t.Fatalf("backup of the stopped agent: code %d\n%s%s", code, out, errs)
	}
}
