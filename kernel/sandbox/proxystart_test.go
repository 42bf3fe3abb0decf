package sandbox_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// lnk sandbox run makes the proxy's socket, starts the proxy and builds
// the sandbox without waiting for it. A run refused while the proxy is
// still starting ends that proxy before lnk exits; a proxy socket lnk
// cannot make is said, and nothing runs. (A proxy that fails once
// started: TestProxyThatFailsIsReported.)
func TestProxyStartedBesideTheBuild(t *testing.T) {
	requireSandbox(t)
	home := testenv.Home(t)
	unlisted := filepath.Join(home, "unlisted")
	if err := os.WriteFile(unlisted, []byte("#!/bin/sh\necho RAN\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	code, out, errs := lnk(t, "sandbox", "run", "--internet", "--command", "true", "--", unlisted)
	if code != 3 || strings.Contains(out, "RAN") || !strings.Contains(errs, "not in the sandbox's [commands]") {
		t.Fatalf("unlisted program with a proxy: exit %d, want 3\n%s%s", code, out, errs)
	}
	// lnk stopped and reaped its proxy before it exited.
	if ps := processesNaming(home); len(ps) > 0 {
		t.Fatalf("a process of this run outlived lnk: %v", ps)
	}

	// No room for a proxy's socket (~/.lnk is a file): the kernel, which
	// makes it, cannot start there; lnk says why, no proxy starts and
	// nothing runs.
	home = testenv.Home(t)
	if err := os.WriteFile(filepath.Join(home, ".lnk"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = lnk(t, "sandbox", "run", "--internet", "--command", "sh", "--", "sh", "-c", "echo RAN")
	if code == 0 || strings.Contains(out, "RAN") || !strings.Contains(errs, ".lnk is a link or not a folder") {
		t.Fatalf("proxy with no socket: exit %d\n%s%s", code, out, errs)
	}
	if ps := processesNaming(home); len(ps) > 0 {
		t.Fatalf("a process of this run outlived lnk: %v", ps)
	}
}

// processesNaming lists the processes whose command line holds s.
func processesNaming(s string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			found = append(found, e.Name()+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return found
}
