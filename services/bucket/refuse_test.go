package bucket

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv/s3peer"
)

// pullDirs is the pull-* folders left in the agent's rclone HOME.
func pullDirs(t *testing.T, a *Agent) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(a.Home, ".lnk", "agents", a.ID, "rclone", "pull-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWrongKeyFailsClearlyAndPlacesNothing: a bucket added with a
// secret key the server doesn't take fails push and pull with rclone's
// reason (403, the signature), no secret in the error, and the pull
// leaves no folder. The control: the right key pushes and pulls.
func TestWrongKeyFailsClearlyAndPlacesNothing(t *testing.T) {
	a, files := testAgent(t)
	p := s3peer.Start(t, testBucket)
	backupFiles(t, files)
	ctx := context.Background()
	const wrong = "WRONG/secret-key-never-shown-0123"
	if _, err := a.Add(ctx, New{Name: "wrong", Endpoint: p.URL, S3Bucket: testBucket, KeyID: s3peer.KeyID, SecretKey: value(t, wrong)}); err != nil {
		t.Fatal(err)
	}
	_, err := a.Push(ctx, files, "wrong")
	var re *RcloneError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "SignatureDoesNotMatch") || !strings.Contains(err.Error(), "bucket wrong") {
		t.Fatalf("a push with a wrong key: %v", err)
	}
	if strings.Contains(err.Error(), wrong) || strings.Contains(re.Stderr, wrong) {
		t.Fatal("the error holds the secret key")
	}
	if p.Refused() == 0 || len(p.Keys(t, testBucket)) != 0 {
		t.Fatalf("the server refused %d requests and holds %v", p.Refused(), p.Keys(t, testBucket))
	}
	if _, err := a.PullBackup(ctx, "link", "wrong"); err == nil || !strings.Contains(err.Error(), "SignatureDoesNotMatch") {
		t.Fatalf("a pull with a wrong key: %v", err)
	}
	if d := pullDirs(t, a); len(d) != 0 {
		t.Fatalf("a failed pull left %v", d)
	}

	addPeer(t, a, p, "right", false)
	if _, err := a.Push(ctx, files, "right"); err != nil {
		t.Fatalf("the control, the right key: %v", err)
	}
	pulled, err := a.PullBackup(ctx, "link", "right")
	if err != nil {
		t.Fatalf("the control, the right key: %v", err)
	}
	pulled.Close()
}

// TestWrongPasswordPullsNothing: an encrypted bucket read with another
// password finds no backup, says the password may differ, and leaves no
// folder; the same bucket with the password it was pushed with pulls.
func TestWrongPasswordPullsNothing(t *testing.T) {
	a, files := testAgent(t)
	p := s3peer.Start(t, testBucket)
	harness, _ := backupFiles(t, files)
	ctx := context.Background()
	add := func(pass string) {
		t.Helper()
		if _, err := a.Add(ctx, New{Name: "sealed", Endpoint: p.URL, S3Bucket: testBucket, Encrypt: true,
			KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret), Password: value(t, pass)}); err != nil {
			t.Fatal(err)
		}
	}
	add("the-password-it-was-pushed-with")
	if _, err := a.Push(ctx, files); err != nil {
		t.Fatal(err)
	}
	if err := a.Remove("sealed"); err != nil {
		t.Fatal(err)
	}
	add("another-password-entirely")
	_, err := a.PullBackup(ctx, "link", "")
	if !errors.Is(err, ErrNotInBucket) && !strings.Contains(err.Error(), "not found") {
		t.Fatalf("a pull with another password: %v", err)
	}
	if strings.Contains(err.Error(), "another-password") {
		t.Fatal("the error holds the password")
	}
	if d := pullDirs(t, a); len(d) != 0 {
		t.Fatalf("a failed pull left %v", d)
	}
	a.Remove("sealed")
	add("the-password-it-was-pushed-with")
	pulled, err := a.PullBackup(ctx, "link", "")
	if err != nil {
		t.Fatalf("the control, the right password: %v", err)
	}
	defer pulled.Close()
	if got := readAll(t, pulled.Harness); string(got) != string(harness) {
		t.Fatal("the control pulled other bytes")
	}
}

// TestPushLeavesLinksOut: a link in the files folder (to a file outside,
// to a folder outside) is neither followed nor carried, and is named;
// the regular file beside it goes.
func TestPushLeavesLinksOut(t *testing.T) {
	a, files := testAgent(t)
	p := s3peer.Start(t, testBucket)
	addPeer(t, a, p, "plain", false)
	outside := t.TempDir()
	writeFile(t, outside, "secret.txt", []byte("OUTSIDE-SECRET-BYTES"))
	writeFile(t, files, "work/kept.txt", []byte("KEPT-FILE-BYTES"))
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(files, "work", "steal.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(files, "outdir")); err != nil {
		t.Fatal(err)
	}
	pushed, err := a.Push(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pushed.Left, ",") != "outdir,work/steal.txt" {
		t.Fatalf("left out %v", pushed.Left)
	}
	if p.Holds(t, testBucket, []byte("OUTSIDE-SECRET-BYTES")) {
		t.Fatal("a push followed a link out of the files folder")
	}
	if !p.Holds(t, testBucket, []byte("KEPT-FILE-BYTES")) {
		t.Fatal("the control: the regular file beside the link was not pushed")
	}
}

// TestEndpointRefusedBeforeAnythingIsWritten: http:// to a name, or to
// an address not loopback in any spelling, is refused with a hint and
// writes no rclone.conf; http:// to loopback (the control) is taken.
func TestEndpointRefusedBeforeAnythingIsWritten(t *testing.T) {
	a, _ := testAgent(t)
	for _, ep := range []string{"http://s3.invalid", "http://localhost:9000", "ftp://127.0.0.1", "http://user@127.0.0.1:9000", "http://127.0.0.1:9000/path", "http://[fe80::1]:9000", "http://127.0.0.1:0"} {
		_, err := a.Add(context.Background(), New{Name: "x", Endpoint: ep, S3Bucket: testBucket, KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret)})
		if !errors.Is(err, ErrEndpoint) {
			t.Fatalf("%s: %v", ep, err)
		}
		if _, serr := os.Lstat(filepath.Join(a.Home, a.confRel, ConfName)); serr == nil {
			t.Fatalf("%s: refused, yet rclone.conf was written", ep)
		}
	}
	if _, err := a.Add(context.Background(), New{Name: "x", Endpoint: "http://0x7f.1:9000", S3Bucket: testBucket, KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret)}); err != nil {
		t.Fatalf("the control, loopback: %v", err)
	}
	l, _ := a.List()
	if len(l) != 1 || l[0].Endpoint != "http://127.0.0.1:9000" {
		t.Fatalf("kept %+v, not the endpoint written in its one spelling", l)
	}
}

// TestConcurrentAddsKeepEach: eight adds at once each find their bucket
// in rclone.conf after, none lost to another's write (the Config
// folder's lock); the same name added twice at once is kept once.
func TestConcurrentAddsKeepEach(t *testing.T) {
	a, _ := testAgent(t)
	p := s3peer.Start(t, testBucket)
	errs := make(chan error, 10)
	for i := range 8 {
		go func() {
			_, err := a.Add(context.Background(), New{Name: "b" + string(rune('0'+i)), Endpoint: p.URL, S3Bucket: testBucket, KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret)})
			errs <- err
		}()
	}
	for range 2 {
		go func() {
			_, err := a.Add(context.Background(), New{Name: "same", Endpoint: p.URL, S3Bucket: testBucket, KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret)})
			errs <- err
		}()
	}
	refused := 0
	for range 10 {
		if err := <-errs; errors.Is(err, ErrExists) {
			refused++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	l, err := a.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 9 || refused != 1 {
		t.Fatalf("after 8 adds and 2 of one name: %d buckets, %d refused", len(l), refused)
	}
}

// TestStalePullFoldersSwept: a pull folder a pull cut short left is
// removed by the next pull once a day old; one newer (another pull's,
// running) stays.
func TestStalePullFoldersSwept(t *testing.T) {
	a, files := testAgent(t)
	p := s3peer.Start(t, testBucket)
	addPeer(t, a, p, "plain", false)
	backupFiles(t, files)
	if _, err := a.Push(context.Background(), files); err != nil {
		t.Fatal(err)
	}
	h, err := a.rcloneHome()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	old, fresh := filepath.Join(h.Name(), "pull-old"), filepath.Join(h.Name(), "pull-fresh")
	writeFile(t, old, "link.tar", []byte("left by a killed pull"))
	writeFile(t, fresh, "link.tar", []byte("another pull's"))
	day := time.Now().Add(-25 * time.Hour)
	if err := os.Chtimes(old, day, day); err != nil {
		t.Fatal(err)
	}
	pulled, err := a.PullBackup(context.Background(), "link", "")
	if err != nil {
		t.Fatal(err)
	}
	pulled.Close()
	if _, err := os.Lstat(old); err == nil {
		t.Fatal("a day-old pull folder is still there")
	}
	if _, err := os.Lstat(fresh); err != nil {
		t.Fatalf("the control, a newer pull folder: %v", err)
	}
}
