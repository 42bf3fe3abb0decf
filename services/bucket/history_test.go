package bucket

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv/s3peer"
)

// TestPushKeepsWhatItReplaces: a second push after a file was changed
// and another deleted keeps both as they were under replaced/<time>, so
// an agent that empties its files folder doesn't empty its bucket's past.
func TestPushKeepsWhatItReplaces(t *testing.T) {
	a, files := testAgent(t)
	p := s3peer.Start(t, testBucket)
	addPeer(t, a, p, "plain", false)
	writeFile(t, files, "work/changed.txt", []byte("FIRST-VERSION"))
	writeFile(t, files, "work/deleted.txt", []byte("DELETED-FILE"))
	ctx := context.Background()
	if _, err := a.Push(ctx, files); err != nil {
		t.Fatal(err)
	}
	writeFile(t, files, "work/changed.txt", []byte("SECOND-VERSION"))
	if err := os.Remove(filepath.Join(files, "work", "deleted.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Push(ctx, files); err != nil {
		t.Fatal(err)
	}
	objs := p.Objects(t, testBucket)
	prefix := a.ID + "/"
	if string(objs[prefix+"files/work/changed.txt"]) != "SECOND-VERSION" {
		t.Fatalf("the mirror holds %q", objs[prefix+"files/work/changed.txt"])
	}
	if _, ok := objs[prefix+"files/work/deleted.txt"]; ok {
		t.Fatal("the mirror still holds the deleted file")
	}
	kept := map[string]string{}
	for k, v := range objs {
		if rest, ok := strings.CutPrefix(k, prefix+"replaced/"); ok {
			_, name, _ := strings.Cut(rest, "/")
			kept[name] = string(v)
		}
	}
	if kept["work/changed.txt"] != "FIRST-VERSION" || kept["work/deleted.txt"] != "DELETED-FILE" {
		t.Fatalf("replaced/ keeps %v", kept)
	}
}

// TestTamperedObjectFailsThePull: an encrypted archive changed on the
// server (one byte) fails the pull, crypt's authentication refusing it,
// and leaves no folder; the untouched one (the control) pulled first.
func TestTamperedObjectFailsThePull(t *testing.T) {
	a, files := testAgent(t)
	p := s3peer.Start(t, testBucket)
	addPeer(t, a, p, "sealed", true)
	backupFiles(t, files)
	ctx := context.Background()
	if _, err := a.Push(ctx, files); err != nil {
		t.Fatal(err)
	}
	pulled, err := a.PullBackup(ctx, "link", "")
	if err != nil {
		t.Fatalf("the control, untouched: %v", err)
	}
	pulled.Close()
	// The harness's archive is the largest object.
	var key string
	var data []byte
	for k, v := range p.Objects(t, testBucket) {
		if len(v) > len(data) {
			key, data = k, v
		}
	}
	data = bytes.Clone(data)
	data[len(data)/2] ^= 1
	p.Tamper(t, testBucket, key, data)
	_, err = a.PullBackup(ctx, "link", "")
	if err == nil || !strings.Contains(err.Error(), "failed to authenticate") {
		t.Fatalf("a tampered archive: %v", err)
	}
	if d := pullDirs(t, a); len(d) != 0 {
		t.Fatalf("a failed pull left %v", d)
	}
}

// TestPushRefusesDeepFolders: a files folder more than 32 folders deep
// refuses the push before rclone runs; 32 deep (the control) pushes.
func TestPushRefusesDeepFolders(t *testing.T) {
	a, files := testAgent(t)
	p := s3peer.Start(t, testBucket)
	addPeer(t, a, p, "plain", false)
	deep := strings.Repeat("d/", maxDepth)
	writeFile(t, files, deep+"f.txt", []byte("DEEP"))
	if _, err := a.Push(context.Background(), files); err != nil {
		t.Fatalf("the control, %d deep: %v", maxDepth, err)
	}
	writeFile(t, files, deep+"d/f.txt", []byte("TOO-DEEP"))
	_, err := a.Push(context.Background(), files)
	if err == nil || !strings.Contains(err.Error(), "deep") {
		t.Fatalf("%d deep: %v", maxDepth+1, err)
	}
}
