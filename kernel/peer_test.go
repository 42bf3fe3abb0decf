package kernel_test

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/audit"
	"lnk.dev/lnk/internal/testenv"
)

// Another uid's connection is refused and logged, even when the folders
// around the socket have been opened up so it can reach it.
func TestAnotherUIDIsRefusedAndLogged(t *testing.T) {
	// Only root can become another user: the root run of the suite
	// covers this test (CI runs it as root before the user suite).
	cred, uid := testenv.OtherUser(t)
	home := testenv.Home(t)
	startKernel(t, home)
	// The attacker's best case: every folder on the way is opened up.
	sock := filepath.Join(home, ".lnk", "run", "kernel.sock")
	testenv.OpenSocketToAll(t, sock)
	// The child is this test binary, copied where the other user can run it.
	run := testenv.SelfRunner(t, "LNK_KERNEL_TEST_CONNECT="+sock, "PATH=/usr/bin:/bin")
	if out := run(cred); out != "closed" {
		t.Fatalf("the other user's ping: %s", out)
	}
	e := waitAudit(t, home, "refusing uid "+strconv.Itoa(uid), func(e audit.Entry) bool {
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
