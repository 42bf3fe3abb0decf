package bucket

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/testenv/s3peer"
)

// testBucket is the S3 bucket every test's peer holds.
const testBucket = "lnk-test"

// needRclone fails the test (LNK_REQUIRE_SANDBOX=1) or skips it where
// rclone is not installed (scripts/install-deps.sh installs it) or the
// kernel has no landlock.
func needRclone(t testing.TB) {
	t.Helper()
	_, err := exec.LookPath("rclone")
	testenv.Require(t, err == nil, "rclone (scripts/install-deps.sh installs it)")
	testenv.Require(t, landlock.ABI() > 0, "landlock (rclone runs confined by it)")
}

// testAgent is a new agent "helper" in a fresh HOME, its files folder.
func testAgent(t testing.TB) (*Agent, string) {
	t.Helper()
	needRclone(t)
	home := testenv.Home(t)
	if _, err := caps.CreateAgent(home, "helper"); err != nil {
		t.Fatal(err)
	}
	a, err := LoadAgent(home, "helper")
	if err != nil {
		t.Fatal(err)
	}
	return a, caps.Layout{Home: a.Home}.FilesDir("helper")
}

func value(t testing.TB, s string) *secret.Value {
	t.Helper()
	v, err := secret.FromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// addPeer adds bucket name on peer p to a, with the peer's key pair.
func addPeer(t testing.TB, a *Agent, p *s3peer.Peer, name string, encrypt bool) Bucket {
	t.Helper()
	b, err := a.Add(context.Background(), New{Name: name, Endpoint: p.URL, S3Bucket: testBucket, Encrypt: encrypt,
		KeyID: s3peer.KeyID, SecretKey: value(t, s3peer.Secret)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeFile writes data at rel below dir, making its folders.
func writeFile(t testing.TB, dir, rel string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// readAll reads f from its start.
func readAll(t testing.TB, f *os.File) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func statNoFollow(p string) (os.FileInfo, error) { return os.Lstat(p) }
