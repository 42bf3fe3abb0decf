package bucket

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRcloneReachesOnlyItsFolders: the rclone child, confined to the
// files folder it pushes, lists it (the control) but not a folder
// outside it, nor the owner's folder above it: what a link swapped in
// mid-walk would lead it to.
func TestRcloneReachesOnlyItsFolders(t *testing.T) {
	a, files := testAgent(t)
	writeFile(t, files, "work/mine.txt", []byte("mine"))
	outside := t.TempDir()
	writeFile(t, outside, "theirs.txt", []byte("theirs"))
	r, h, err := a.runner(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	out, err := r.run(ctx, nil, reach{read: files}, "lsf", "-R", files)
	if err != nil || !strings.Contains(string(out), "work/mine.txt") {
		t.Fatalf("the control, its own files folder: %q %v", out, err)
	}
	for _, dir := range []string{outside, filepath.Dir(files), "/etc"} {
		out, err := r.run(ctx, nil, reach{read: files}, "lsf", dir)
		if err == nil {
			t.Fatalf("rclone confined to the files folder listed %s: %q", dir, out)
		}
		if !strings.Contains(err.Error(), "permission denied") {
			t.Fatalf("listing %s: %v, not a refusal", dir, err)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatal(err)
	}
}
