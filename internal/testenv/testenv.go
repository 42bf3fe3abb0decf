// Package testenv is what Link's tests share: a temporary HOME, the
// built binaries, the one way a sandbox test may skip, and network
// namespaces of a test's own (InNetns, with interfaces and addresses
// made over rtnetlink), where whatever a test dials stays on the machine.
//
// A test never touches the real HOME: Home points HOME (and XDG folders)
// at a fresh temporary folder, and stops at cleanup a kernel lnk started
// on demand under it. A test that needs a kernel feature calls
// Require; with LNK_REQUIRE_SANDBOX=1 (CI sets it) a missing feature is a
// failure, never a skip.
package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// Home makes a temporary HOME for t, mode 0700, and points HOME,
// XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME and XDG_RUNTIME_DIR into
// it for the rest of the test. It returns the folder's path.
func Home(t testing.TB) string {
	t.Helper()
	dir := HomeDir(t)
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, ".local", "share"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, ".local", "state"))
	t.Setenv("XDG_RUNTIME_DIR", filepath.Join(dir, ".run"))
	return dir
}

// HomeDir is Home's folder, made and cleaned up alike (a kernel lnk
// started on demand under it stopped), with this process's environment
// left as it is: for a parallel test (t.Parallel), which may not set
// it, and which names the folder to each program it starts (HOME=…).
func HomeDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "lnk-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Cleanup(func() { stopKernel(t, dir) }) // before the folder goes (kernel.go)
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// Resolve /tmp links once so paths compare equal to what the code sees.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	// Before the folder goes: a kernel lnk started on demand under it.
	t.Cleanup(func() { stopKernels(dir) })
	if err := os.Mkdir(filepath.Join(dir, ".run"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Required reports whether CI demands every sandbox feature
// (LNK_REQUIRE_SANDBOX=1).
func Required() bool { return os.Getenv("LNK_REQUIRE_SANDBOX") == "1" }

// Require skips t when ok is false, saying what is missing — or, under
// LNK_REQUIRE_SANDBOX=1, fails it: in CI a missing feature is a failure.
func Require(t testing.TB, ok bool, what string) {
	t.Helper()
	if ok {
		return
	}
	if Required() {
		t.Fatalf("LNK_REQUIRE_SANDBOX=1 and this machine lacks %s", what)
	}
	t.Skipf("this machine lacks %s", what)
}
