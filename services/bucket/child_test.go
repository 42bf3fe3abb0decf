package bucket

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv/s3peer"
)

// recordingRclone is a program standing in for rclone that records the
// arguments and the environment it was given (NUL-separated, a line a
// run) into dir, then runs rclone with them. dir must be in the child's
// reach (its HOME): the child is confined, /proc included.
func recordingRclone(t *testing.T, dir string) string {
	t.Helper()
	real, err := exec.LookPath("rclone")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "rclone")
	script := "#!/bin/sh\nprintf '%s\\0' \"$@\" >> " + dir + "/cmdline\nprintf '\\n' >> " + dir + "/cmdline\n" +
		"env -0 >> " + dir + "/environ\nprintf '\\n' >> " + dir + "/environ\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(p, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNoSecretOnRcloneCommandLineOrEnvironment: through add, push and
// pull of an encrypted bucket, rclone's command line and environment (as the
// program was started with them) hold neither the secret key, nor the password,
// nor its obscured form, nor any of the owner's proxy, AWS or RCLONE
// variables; only the names Link sets.
func TestNoSecretOnRcloneCommandLineOrEnvironment(t *testing.T) {
	a, files := testAgent(t)
	// In the child's HOME: the only folder outside its reach it writes.
	h, err := a.rcloneHome()
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	rec := h.Name()
	a.Rclone = recordingRclone(t, rec)
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "owner-aws-secret")
	t.Setenv("RCLONE_CONFIG", "/owner/rclone.conf")
	p := s3peer.Start(t, testBucket)
	const pass = "password-never-on-a-command-line"
	ctx := context.Background()
	if _, err := a.Add(ctx, New{Name: "sealed", Endpoint: p.URL, S3Bucket: testBucket, Encrypt: true,
		KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret), Password: value(t, pass)}); err != nil {
		t.Fatal(err)
	}
	backupFiles(t, files)
	if _, err := a.Push(ctx, files); err != nil {
		t.Fatal(err)
	}
	pulled, err := a.PullBackup(ctx, "link", "")
	if err != nil {
		t.Fatal(err)
	}
	pulled.Close()
	conf, err := os.ReadFile(filepath.Join(a.Home, a.confRel, ConfName))
	if err != nil {
		t.Fatal(err)
	}
	_, obscured, _ := strings.Cut(string(conf), "\npassword = ")
	obscured = strings.TrimSpace(obscured)
	cmdline, _ := os.ReadFile(filepath.Join(rec, "cmdline"))
	environ, _ := os.ReadFile(filepath.Join(rec, "environ"))
	if n := bytes.Count(cmdline, []byte("\n")); n < 3 {
		t.Fatalf("rclone ran %d times, not obscure, sync and copy", n)
	}
	if !bytes.Contains(cmdline, []byte("--config\x00/dev/fd/3")) || !bytes.Contains(cmdline, []byte("obscure\x00-")) {
		t.Fatalf("the recording shows no --config /dev/fd/3 or obscure -: %q", cmdline)
	}
	for _, s := range []string{s3peer.Secret, pass, obscured, "owner-aws-secret", "/owner/rclone.conf", "127.0.0.1:1"} {
		if len(s) < 8 {
			t.Fatalf("no secret to look for: %q", s)
		}
		if bytes.Contains(cmdline, []byte(s)) || bytes.Contains(environ, []byte(s)) {
			t.Fatalf("rclone's command line or environment holds %q", s[:6])
		}
	}
	names := map[string]bool{}
	for _, kv := range bytes.FieldsFunc(environ, func(r rune) bool { return r == 0 || r == '\n' }) {
		k, _, _ := strings.Cut(string(kv), "=")
		if k != "PWD" { // the shell's own, not the child's
			names[k] = true
		}
	}
	var got []string
	for k := range names {
		got = append(got, k)
	}
	sort.Strings(got)
	if strings.Join(got, " ") != "HOME LANG PATH TZ XDG_CACHE_HOME XDG_CONFIG_HOME" {
		t.Fatalf("rclone's environment holds %v", got)
	}
}
