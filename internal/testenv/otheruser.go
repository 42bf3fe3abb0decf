package testenv

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// OtherUser is the credential of the unprivileged test user lnktest and
// its uid, for a test (run as root: RequireRoot) that connects as
// another uid.
func OtherUser(t testing.TB) (*syscall.Credential, int) {
	t.Helper()
	RequireRoot(t, "connecting as another uid")
	u, err := user.Lookup("lnktest")
	Require(t, err == nil, "the user lnktest")
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid
}

// OpenSocketToAll opens unix socket sock to every uid, and each folder
// above it up to (never) the shared temporary folder or /: an attacker's
// best case, so a refusal is the service's own.
func OpenSocketToAll(t testing.TB, sock string) {
	t.Helper()
	for p := filepath.Dir(sock); p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		t.Fatal(err)
	}
}

// SelfRunner copies this test binary where any user can run it and
// returns a func that runs the copy with env alone, as cred's user (nil:
// this process's), and gives its output trimmed; a child that fails
// fails t. The test's TestMain tells the child by its env.
func SelfRunner(t testing.TB, env ...string) func(cred *syscall.Credential) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lnk-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "peer.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	// Explicitly, whatever the umask.
	for _, p := range []string{dir, bin} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return func(cred *syscall.Credential) string {
		t.Helper()
		cmd := exec.Command(bin)
		cmd.Dir = dir
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
}
