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

// TestDeleteRemovesRcloneHome: an agent whose bucket was pushed to (a
// real rclone against a real S3 peer on 127.0.0.1) has
// ~/.lnk/agents/<id>/rclone, its rclone children's HOME; lnk agent
// delete removes it, a link planted in it removed as itself (what it
// pointed at is untouched), and the tree under ~/.lnk read back after
// the delete holds nothing of it. The control: before the delete, the
// folder is there, as the push made it.
func TestDeleteRemovesRcloneHome(t *testing.T) {
	lnkBin(t)
	_, err := exec.LookPath("rclone")
	testenv.Require(t, err == nil, "rclone (scripts/install-deps.sh installs it)")
	home := testenv.Home(t)
	p := s3peer.Start(t, "lnk-del")
	run := func(stdin string, want int, args ...string) string {
		t.Helper()
		out, errs, code := lnkRun(t, []byte(stdin), args...)
		if code != want {
			t.Fatalf("lnk %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
		}
		return out + errs
	}
	run("", 0, "agent", "create", "gone")
	a, err := caps.LoadAgent(home, "gone")
	if err != nil {
		t.Fatal(err)
	}
	run(s3peer.KeyID+"\n"+s3peer.Secret+"\n", 0, "agent", "bucket", "add", "gone", "b", "--s3", p.URL, "--bucket", "lnk-del")
	run("", 0, "bucket", "push", "gone")
	rc := filepath.Join(home, ".lnk", "agents", a.ID, caps.RcloneHome)
	if st, err := os.Lstat(rc); err != nil || !st.IsDir() {
		t.Fatalf("the push made no %s: %v", rc, err)
	}
	outside := filepath.Join(t.TempDir(), "kept")
	if err := os.WriteFile(outside, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(rc, "out")); err != nil {
		t.Fatal(err)
	}

	run("", 0, "agent", "delete", "gone")
	if _, err := os.Lstat(rc); !os.IsNotExist(err) {
		t.Fatalf("%s after the delete: %v", rc, err)
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "mine" {
		t.Fatalf("the link's target after the delete: %q, %v", b, err)
	}
	var left []string
	filepath.Walk(filepath.Join(home, ".lnk"), func(path string, info os.FileInfo, err error) error {
		if err == nil && (strings.Contains(path, "/"+caps.RcloneHome+"/") || strings.HasSuffix(path, "/"+caps.RcloneHome)) {
			left = append(left, path)
		}
		return nil
	})
	if len(left) != 0 {
		t.Fatalf("left after the delete: %v", left)
	}
}
