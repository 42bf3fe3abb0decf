package cli

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/testenv/s3peer"
)

// TestBucketCommands: add (keys and password on stdin) writes
// Config/rclone.conf 600 with the password obscured; list and agent show
// name the bucket and never a secret; push leaves a link out and names
// it; pull puts the backup back in .lnk-backup byte for byte; remove
// drops it. Refusals exit with a hint and write nothing, beside the
// control that works. No output, and no file under HOME but rclone.conf,
// holds a key or the password.
func TestBucketCommands(t *testing.T) {
	lnkBin(t)
	_, err := exec.LookPath("rclone")
	testenv.Require(t, err == nil, "rclone (scripts/install-deps.sh installs it)")
	home := testenv.Home(t)
	p := s3peer.Start(t, "lnk-cli")
	const pass = "cli-password-never-printed-77"
	var seen strings.Builder
	run := func(stdin string, want int, args ...string) string {
		t.Helper()
		out, errs, code := lnkRun(t, []byte(stdin), args...)
		seen.WriteString(out + errs)
		if code != want {
			t.Fatalf("lnk %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out + errs
	}
	run("", 0, "agent", "create", "helper")
	l := caps.Layout{Home: home}
	conf := filepath.Join(l.ConfigDir("helper"), "rclone.conf")
	keys := s3peer.KeyID + "\n" + s3peer.Secret + "\n"

	out := run(keys, 3, "agent", "bucket", "add", "helper", "backup", "--s3", "http://s3.invalid:9000", "--bucket", "lnk-cli")
	if !strings.Contains(out, "loopback") || !strings.Contains(out, "hint: lnk agent bucket add") {
		t.Fatalf("an http endpoint off loopback: %s", out)
	}
	out = run(keys, 3, "agent", "bucket", "add", "helper", "backup", "--s3", "http://AKID:url-password-never-shown@127.0.0.1:9000", "--bucket", "lnk-cli")
	if strings.Contains(out, "url-password") || !strings.Contains(out, "hint: ") {
		t.Fatalf("an endpoint with a user: %s", out)
	}
	logged, _ := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if n := strings.Count(string(logged), "bucket-endpoint"); n != 2 || strings.Contains(string(logged), "url-password") {
		t.Fatalf("the audit log has %d endpoint refusals (want 2, once each, no password):\n%s", n, logged)
	}
	run(keys, 2, "agent", "bucket", "add", "helper", "backup", "--bucket", "lnk-cli")
	run(s3peer.KeyID+"\n", 2, "agent", "bucket", "add", "helper", "backup", "--s3", p.URL, "--bucket", "lnk-cli")
	if _, err := os.Lstat(conf); err == nil {
		t.Fatal("a refused add wrote rclone.conf")
	}

	run(keys+pass+"\n", 0, "agent", "bucket", "add", "helper", "backup", "--s3", p.URL, "--bucket", "lnk-cli", "--encrypt", "--ask-password")
	st, err := os.Lstat(conf)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("rclone.conf: %v %v", st, err)
	}
	text, _ := os.ReadFile(conf)
	if bytes.Contains(text, []byte(pass)) || !bytes.Contains(text, []byte("[backup]\ntype = crypt\n")) || !bytes.Contains(text, []byte("secret_access_key = "+s3peer.Secret+"\n")) {
		t.Fatalf("rclone.conf:\n%s", text)
	}
	_, obscured, _ := strings.Cut(string(text), "\npassword = ")
	obscured = strings.TrimSpace(obscured)
	run(keys, 3, "agent", "bucket", "add", "helper", "backup", "--s3", p.URL, "--bucket", "lnk-cli")

	if out := run("", 0, "agent", "bucket", "list", "helper"); !strings.Contains(out, "backup") || !strings.Contains(out, p.URL) || !strings.Contains(out, "yes") {
		t.Fatalf("list: %s", out)
	}
	if out := run("", 0, "agent", "show", "helper"); !strings.Contains(out, "buckets  backup ("+p.URL) || !strings.Contains(out, "encrypted") {
		t.Fatalf("show: %s", out)
	}

	files := l.FilesDir("helper")
	archive := make([]byte, 200<<10)
	rand.Read(archive)
	if err := os.MkdirAll(filepath.Join(files, ".lnk-backup"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, ".lnk-backup", "link.tar"), archive, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(files, "work", "host")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/hostname", filepath.Join(files, "work", "esc\x1b]0;title\x07")); err != nil {
		t.Fatal(err)
	}
	out = run("", 0, "bucket", "push", "helper")
	if !strings.Contains(out, "pushed agent helper's files folder to bucket backup") || !strings.Contains(out, `left out "work/host"`) ||
		!strings.Contains(out, `left out "work/esc\x1b]0;title\a"`) || strings.ContainsRune(out, 0x1b) {
		t.Fatalf("push: %s", out)
	}
	if err := os.Remove(filepath.Join(files, ".lnk-backup", "link.tar")); err != nil {
		t.Fatal(err)
	}
	out = run("", 0, "bucket", "pull", "helper")
	if !strings.Contains(out, "from bucket backup") {
		t.Fatalf("pull: %s", out)
	}
	got, err := os.ReadFile(filepath.Join(files, ".lnk-backup", "link.tar"))
	if err != nil || !bytes.Equal(got, archive) {
		t.Fatalf("the pulled archive differs from the one pushed (%v)", err)
	}
	run("", 4, "bucket", "pull", "helper", "--bucket", "nosuch")

	for _, s := range []string{s3peer.Secret, pass, obscured, "url-password"} {
		if strings.Contains(seen.String(), s) {
			t.Fatalf("lnk's output holds a secret (%.5s…)", s)
		}
	}
	filepath.Walk(home, func(path string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() || path == conf || strings.Contains(path, "/go/") {
			return nil
		}
		b, _ := os.ReadFile(path)
		for _, s := range []string{s3peer.Secret, pass, obscured} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds a secret (%.5s…)", path, s)
			}
		}
		return nil
	})

	run("", 0, "agent", "bucket", "remove", "helper", "backup")
	if out := run("", 0, "agent", "bucket", "list", "helper"); strings.Contains(out, "backup") {
		t.Fatalf("list after remove: %s", out)
	}
	run("", 4, "agent", "bucket", "remove", "helper", "backup")
	out = run("", 3, "bucket", "push", "helper")
	if !strings.Contains(out, "hint: lnk agent bucket add helper") {
		t.Fatalf("push with no bucket: %s", out)
	}
}

// TestBucketPushRefusesANameToLoopback: a bucket whose https endpoint is
// a name the system's resolver answers with loopback (localhost, from
// /etc/hosts: no DNS asked) is refused by push and pull with a one-line
// reason and a hint, logged once, the S3 server there holding nothing;
// the control, the owner's bucket at http://127.0.0.1:PORT, the same
// server, pushes.
func TestBucketPushRefusesANameToLoopback(t *testing.T) {
	lnkBin(t)
	_, err := exec.LookPath("rclone")
	testenv.Require(t, err == nil, "rclone (scripts/install-deps.sh installs it)")
	home := testenv.Home(t)
	p := s3peer.Start(t, "lnk-cli")
	port := strings.TrimPrefix(p.URL, "http://127.0.0.1")
	run := func(stdin string, want int, args ...string) string {
		t.Helper()
		out, errs, code := lnkRun(t, []byte(stdin), args...)
		if code != want {
			t.Fatalf("lnk %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out + errs
	}
	run("", 0, "agent", "create", "helper")
	files := caps.Layout{Home: home}.FilesDir("helper")
	if err := os.WriteFile(filepath.Join(files, "note.txt"), []byte("kept here"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := s3peer.KeyID + "\n" + s3peer.Secret + "\n"
	run(keys, 0, "agent", "bucket", "add", "helper", "far", "--s3", "https://localhost"+port, "--bucket", "lnk-cli")
	for _, verb := range []string{"push", "pull"} {
		out := run("", 3, "bucket", verb, "helper")
		if !strings.Contains(out, "resolves to a loopback address") || !strings.Contains(out, "hint: lnk agent bucket remove helper far, then lnk agent bucket add helper far") {
			t.Fatalf("bucket %s to a name answered with loopback: %s", verb, out)
		}
	}
	if keys := p.Keys(t, "lnk-cli"); len(keys) != 0 {
		t.Fatalf("the server holds %v after refused pushes", keys)
	}
	logged, _ := os.ReadFile(filepath.Join(home, ".lnk", "log", "audit.log"))
	if n := strings.Count(string(logged), "bucket-endpoint-reach"); n != 2 {
		t.Fatalf("the audit log has %d endpoint refusals (want 2, once each):\n%s", n, logged)
	}

	run("", 0, "agent", "bucket", "remove", "helper", "far")
	run(keys, 0, "agent", "bucket", "add", "helper", "mine", "--s3", p.URL, "--bucket", "lnk-cli")
	run("", 0, "bucket", "push", "helper")
	if !p.Holds(t, "lnk-cli", []byte("kept here")) {
		t.Fatalf("the control pushed nothing: %v", p.Keys(t, "lnk-cli"))
	}
}
