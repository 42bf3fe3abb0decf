package fs

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestNoFDLeaksIntoLaterChildren: after the broker served opens (their
// fds came back over SCM_RIGHTS), listings and writes, a child this
// process starts holds nothing beyond 0–2 — and what this test process
// itself inherited from go test, which is not Link's to close.
func TestNoFDLeaksIntoLaterChildren(t *testing.T) {
	tr := newTree(t)
	baseline := inheritedFDs("self")
	c, _ := startBroker(t, tr)
	ctx := context.Background()
	must(t, c.MkdirAll(ctx, "home", "d", 0))
	_, err := c.Write(ctx, "home", "d/f", make([]byte, 100<<10), WriteOptions{})
	must(t, err)
	var held []*os.File
	for i := 0; i < 10; i++ {
		f, _, err := c.Open(ctx, "home", "d/f", 0)
		must(t, err)
		held = append(held, f) // still open while the child starts
	}
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	_, err = c.Walk(ctx, "home", ".", resolveWalkAll)
	must(t, err)

	exe, err := os.Executable()
	must(t, err)
	cmd := exec.Command(exe)
	cmd.Env = []string{listFDsMarker + "=1"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the child: %v", err)
	}
	for _, fd := range strings.Fields(string(out)) {
		n, _, _ := strings.Cut(fd, "→")
		if n == "0" || n == "1" || n == "2" || slices.Contains(baseline, fd) {
			continue
		}
		t.Errorf("a child started after the broker served requests holds %s", fd)
	}
}
