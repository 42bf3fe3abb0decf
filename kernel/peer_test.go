package kernel_test

import (
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/testenv"
)

// Another uid's connection is refused and logged, even when the folders
// around the socket have been opened up so it can reach it.
func TestAnotherUIDIsRefusedAndLogged(t *testing.T) {
	if os.Geteuid() != 0 {
		// Only root can become another user; the root run of the suite
		// covers this test (CI runs it as root before the user suite).
		t.Skip("connecting as another uid needs root")
	}
	other, err := user.Lookup("lnktest")
	if err != nil {
		other, err = user.Lookup("nobody")
	}
	testenv.Require(t, err == nil, "a second user (lnktest or nobody)")
	uid, _ := strconv.Atoi(other.Uid)
	gid, _ := strconv.Atoi(other.Gid)

	home := testenv.Home(t)
	startKernel(t, home)
	// The attacker's best case: every folder on the way is opened up.
	for _, p := range []string{home, filepath.Join(home, ".lnk"), filepath.Join(home, ".lnk", "run")} {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(home, ".lnk", "run", "kernel.sock")
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
	// The child is this test binary, copied where the other user can run it.
	dir, err := os.MkdirTemp("", "lnk-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	self, _ := os.Executable()
	bin := filepath.Join(dir, "peer.test")
	copyFile(t, self, bin)

	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = []string{"LNK_KERNEL_TEST_CONNECT=" + sock, "PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the other user's child: %v\n%s", err, out)
	}
	if strings.TrimSpace(string(out)) != "closed" {
		t.Fatalf("the other user's ping: %s", out)
	}
	e := waitAudit(t, home, "refusing uid "+other.Uid, func(e audit.Entry) bool {
		return e.Kind == audit.KindRefuse && e.Peer != nil && e.Peer.UID == uid
	})
	if !strings.Contains(e.Reason, "not the owner's") {
		t.Errorf("refusal reason %q", e.Reason)
	}
	// The owner is still served (its client insists on 0700 folders).
	for _, p := range []string{home, filepath.Join(home, ".lnk"), filepath.Join(home, ".lnk", "run")} {
		os.Chmod(p, 0o700)
	}
	if err := connect(t, home).Ping(ctx(t)); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	// Explicitly: an in-process kernel of another test set umask 077.
	if err := os.Chmod(to, 0o755); err != nil {
		t.Fatal(err)
	}
}
