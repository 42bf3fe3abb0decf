package testenv

import (
	"os"
	"testing"
)

// RequireRoot skips t where the test does not run as root, saying why it
// needs root — or fails it under CI=true, which runs the suite as root:
// there a skip would hide a test that was meant to run. The suite's
// second run as an unprivileged owner (scripts/test-as-user.sh, which
// sets LNK_TEST_AS_USER=1) skips it: the root run of the same suite ran
// it.
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("LNK_TEST_AS_USER") == "1" {
		t.Skipf("needs root (the root run covers it): %s", why)
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and this test does not run as root, which it needs: %s", why)
	}
	t.Skipf("needs root: %s", why)
}
