package bucket

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"

	"lnk.dev/lnk/internal/testenv/s3peer"
)

// backupFiles puts a backup's two archives and a note in files, and
// returns the archives' bytes (random, so no other file holds them).
func backupFiles(t *testing.T, files string) (harness, agent []byte) {
	harness, agent = make([]byte, 300<<10), make([]byte, 20<<10)
	rand.Read(harness)
	rand.Read(agent)
	writeFile(t, files, ".lnk-backup/link.tar", harness)
	writeFile(t, files, ".lnk-backup/Agent.tar", agent)
	writeFile(t, files, "notes/plain.md", []byte("PLAINTEXT-MARKER the agent's own notes\n"))
	return harness, agent
}

// TestPushThenPullRoundTrip: a push then a pull gives back the backup's
// archives byte for byte, opened from a 700 folder the pull made, which
// Close removes; unencrypted, the objects on the server are the files.
func TestPushThenPullRoundTrip(t *testing.T) {
	a, files := testAgent(t)
	p := s3peer.Start(t, testBucket)
	addPeer(t, a, p, "plain", false)
	harness, agent := backupFiles(t, files)
	ctx := context.Background()
	pushed, err := a.Push(ctx, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(pushed.Buckets) != 1 || pushed.Buckets[0] != "plain" {
		t.Fatalf("pushed to %v", pushed.Buckets)
	}
	stored := p.Objects(t, testBucket)
	if !bytes.Equal(stored[a.ID+"/files/.lnk-backup/link.tar"], harness) {
		t.Fatalf("the server holds %v, not the archive under the agent's folder", p.Keys(t, testBucket))
	}
	pulled, err := a.PullBackup(ctx, "link", "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(readAll(t, pulled.Harness), harness) || !bytes.Equal(readAll(t, pulled.Agent), agent) {
		t.Fatal("pulled archives differ from those pushed")
	}
	st, err := pulled.Harness.Stat()
	if err != nil || !st.Mode().IsRegular() {
		t.Fatalf("pulled archive: %v %v", st, err)
	}
	dir := pulled.Dir
	if err := pulled.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := statNoFollow(dir); err == nil {
		t.Fatalf("%s is still there after Close", dir)
	}
}
