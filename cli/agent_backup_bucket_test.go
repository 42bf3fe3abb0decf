package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/testenv/s3peer"
)

// TestBackupRestoreThroughABucket: lnk agent backup pushes the backup to
// the agent's (encrypted) bucket on a real S3 server; with the files
// folder's .lnk-backup gone, lnk agent restore pulls it back and puts the
// conversation back. A bucket's backup that is not the last one written
// here is refused, nothing changed, and restore --local of the last one
// works beside it (the control).
func TestBackupRestoreThroughABucket(t *testing.T) {
	lnkBin(t)
	_, err := exec.LookPath("rclone")
	testenv.Require(t, err == nil, "rclone (scripts/install-deps.sh installs it)")
	home := testenv.Home(t)
	p := s3peer.Start(t, "lnk-backups")
	run := func(stdin string, want int, args ...string) string {
		t.Helper()
		out, errs, code := lnkRun(t, []byte(stdin), args...)
		if code != want {
			t.Fatalf("lnk %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out + errs
	}
	run("", 0, "agent", "create", "main")
	chat := filepath.Join(caps.Layout{Home: home}.OwnDir("main"), "chats", "c.jsonl")
	put := func(s string) {
		if err := os.WriteFile(chat, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string { b, _ := os.ReadFile(chat); return string(b) }

	put("{\"t\":\"no bucket yet\"}\n")
	if out := run("", 0, "agent", "backup", "main"); !strings.Contains(out, "has no bucket") {
		t.Fatalf("a backup with no bucket: %s", out)
	}
	run(s3peer.KeyID+"\n"+s3peer.Secret+"\n", 0, "agent", "bucket", "add", "main", "b1", "--s3", p.URL, "--bucket", "lnk-backups", "--encrypt")
	put("{\"t\":\"pushed\"}\n")
	if out := run("", 0, "agent", "backup", "main"); !strings.Contains(out, "pushed it, with the files folder, to bucket b1") {
		t.Fatalf("backup: %s", out)
	}
	if err := os.RemoveAll(backupDirOf(home)); err != nil {
		t.Fatal(err)
	}
	put("{\"t\":\"changed\"}\n")
	if out := run("", 0, "agent", "restore", "main"); !strings.Contains(out, "pulled agent main's backup from bucket b1") {
		t.Fatalf("restore: %s", out)
	}
	if got := read(); got != "{\"t\":\"pushed\"}\n" {
		t.Fatalf("the conversation after a restore from the bucket: %q", got)
	}

	// A newer backup kept here alone: the bucket's is no longer the last.
	put("{\"t\":\"local only\"}\n")
	if out := run("", 0, "agent", "backup", "main", "--local"); strings.Contains(out, "pushed") {
		t.Fatalf("backup --local pushed: %s", out)
	}
	put("{\"t\":\"changed again\"}\n")
	if out := run("", 3, "agent", "restore", "main"); !strings.Contains(out, "hint: ") {
		t.Fatalf("a bucket's backup that is not the last one: %s", out)
	}
	if got := read(); got != "{\"t\":\"changed again\"}\n" {
		t.Fatalf("a refused restore changed the conversation: %q", got)
	}
	run("", 0, "agent", "restore", "main", "--local")
	if got := read(); got != "{\"t\":\"local only\"}\n" {
		t.Fatalf("restore --local: %q", got)
	}
}
