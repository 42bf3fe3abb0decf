package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// The owner's session, as the test process started, before Home moved
// XDG_RUNTIME_DIR: where systemctl --user finds the user manager.
var (
	ownerRuntime = os.Getenv("XDG_RUNTIME_DIR")
	ownerBus     = os.Getenv("DBUS_SESSION_BUS_ADDRESS")
)

// RequireUserManager points XDG_RUNTIME_DIR and DBUS_SESSION_BUS_ADDRESS
// back at the owner's session for the rest of t, and skips t where no
// systemd user manager answers there (as in a container, or as root
// with no session) — or, under LNK_REQUIRE_USER_MANAGER=1, fails it: a
// machine that must run agents as units never passes for one that did.
func RequireUserManager(t testing.TB) {
	t.Helper()
	t.Setenv("XDG_RUNTIME_DIR", ownerRuntime)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", ownerBus)
	err := exec.Command("systemctl", "--user", "show-environment").Run()
	if err == nil {
		return
	}
	if os.Getenv("LNK_REQUIRE_USER_MANAGER") == "1" {
		t.Fatalf("LNK_REQUIRE_USER_MANAGER=1 and no systemd user manager answers: %v", err)
	}
	t.Skipf("no systemd user manager answers here (systemctl --user show-environment: %v); LNK_REQUIRE_USER_MANAGER=1 makes this a failure", err)
}
