package bucket

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv/s3peer"
)

// TestEncryptedBucketHoldsNoPlaintext: with encryption, no object on the
// server holds a byte run of what was pushed, nor a file's name; the
// pull decrypts them back byte for byte. The unencrypted bucket beside it
// (the control) holds them as they are.
func TestEncryptedBucketHoldsNoPlaintext(t *testing.T) {
	a, files := testAgent(t)
	p := s3peer.Start(t, testBucket)
	addPeer(t, a, p, "sealed", true)
	harness, agent := backupFiles(t, files)
	ctx := context.Background()
	if _, err := a.Push(ctx, files); err != nil {
		t.Fatal(err)
	}
	keys := p.Keys(t, testBucket)
	if len(keys) < 3 {
		t.Fatalf("the server holds %v", keys)
	}
	for _, plain := range [][]byte{[]byte("PLAINTEXT-MARKER"), harness[1000:1064], agent[:64], []byte("link.tar"), []byte(".lnk-backup"), []byte("notes")} {
		if p.Holds(t, testBucket, plain) {
			t.Fatalf("an encrypted bucket holds plaintext %q", plain[:min(len(plain), 16)])
		}
	}
	pulled, err := a.PullBackup(ctx, "link", "sealed")
	if err != nil {
		t.Fatal(err)
	}
	defer pulled.Close()
	if !bytes.Equal(readAll(t, pulled.Harness), harness) || !bytes.Equal(readAll(t, pulled.Agent), agent) {
		t.Fatal("the pull did not decrypt the archives as pushed")
	}

	// The control: the same files pushed unencrypted are there to read.
	addPeer(t, a, p, "plain", false)
	if _, err := a.Push(ctx, files, "plain"); err != nil {
		t.Fatal(err)
	}
	if !p.Holds(t, testBucket, []byte("PLAINTEXT-MARKER")) {
		t.Fatal("the control: the unencrypted push's note is not on the server, so the check above proves nothing")
	}
}

// TestConfKeepsThePasswordObscured: rclone.conf is 600 in Config, its
// crypt section holds the password obscured (never as given), and
// List reads back the bucket without a secret.
func TestConfKeepsThePasswordObscured(t *testing.T) {
	a, _ := testAgent(t)
	p := s3peer.Start(t, testBucket)
	const pass = "correct-horse-battery-staple-0451"
	if _, err := a.Add(context.Background(), New{Name: "asked", Endpoint: p.URL, S3Bucket: testBucket, Encrypt: true,
		KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret), Password: value(t, pass)}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(a.Home, a.confRel, ConfName)
	st, err := os.Lstat(path)
	if err != nil || st.Mode().Perm() != 0o600 || !st.Mode().IsRegular() {
		t.Fatalf("%s: %v %v", path, st, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(pass)) {
		t.Fatal("rclone.conf holds the password as given")
	}
	for _, want := range []string{"[asked]\ntype = crypt\nremote = asked_s3:" + testBucket + "/" + a.ID, "\npassword = ", "[asked_s3]\ntype = s3\n", "endpoint = " + p.URL + "\n"} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("rclone.conf lacks %q:\n%s", want, data)
		}
	}
	l, err := a.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 1 || l[0] != (Bucket{Name: "asked", Endpoint: p.URL, S3Bucket: testBucket, Folder: a.ID, Encrypted: true}) {
		t.Fatalf("List: %+v", l)
	}
	if err := a.Remove("asked"); err != nil {
		t.Fatal(err)
	}
	if l, err := a.List(); err != nil || len(l) != 0 {
		t.Fatalf("after Remove: %v %v", l, err)
	}
	if err := a.Remove("asked"); !errors.Is(err, ErrNoBucket) {
		t.Fatalf("removing it twice: %v", err)
	}
}
