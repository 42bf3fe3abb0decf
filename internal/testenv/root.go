package testenv

import (
	"os"
	"testing"
)

// RequireRoot skips t where the test does not run as root, saying why it
// needs root — or fails it under CI=true, which runs the suite as root:
// there a skip would hide a test that was meant to run.
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and this test does not run as root, which it needs: %s", why)
	}
	t.Skipf("needs root: %s", why)
}
