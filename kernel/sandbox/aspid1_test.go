package sandbox_test

import (
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/kernel/sandbox"
)

// With AsPid1 the command is the sandbox's PID 1 (no bubblewrap reaper
// beside it), its exit status still comes back, and every layer still
// holds; without it the command is not PID 1.
func TestAsPid1MakesTheCommandPid1(t *testing.T) {
	w := newWorld(t)
	c := compile(t, w, caps.Grants{Read: []string{w.data}, Commands: []string{"sh", "cat"}})
	script := `echo "pid $$"; cat "$HOME/.ssh/id_test" && echo SSH-READ; cat /proc/self/status | grep -E '^(NoNewPrivs|Seccomp):'; exit 7`
	code, out, errs := run(t, c, sandbox.Options{AsPid1: true}, "sh", "-c", script)
	if code != 7 || !strings.Contains(out, "pid 1\n") {
		t.Fatalf("as PID 1: code %d, out %q, err %q", code, out, errs)
	}
	if strings.Contains(out, "SSH-READ") || !strings.Contains(out, "NoNewPrivs:\t1") || !strings.Contains(out, "Seccomp:\t2") {
		t.Fatalf("as PID 1 the layers must still hold: %q", out)
	}
	code, out, errs = run(t, c, sandbox.Options{}, "sh", "-c", script)
	if code != 7 || strings.Contains(out, "pid 1\n") {
		t.Fatalf("without AsPid1: code %d, out %q, err %q", code, out, errs)
	}
}
