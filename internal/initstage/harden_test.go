package initstage

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBoundProcsByRlimit: where the kernel has no pid_max per pid
// namespace, the bound is RLIMIT_NPROC, soft and hard, which the command
// cannot raise (it holds no CAP_SYS_RESOURCE). Run in a child of the
// test, whose limits it lowers for good.
func TestBoundProcsByRlimit(t *testing.T) {
	if os.Getenv("LNK_TEST_BOUND_CHILD") == "1" {
		if err := boundProcs(&Plan{MaxProcs: 4096, ProcsBy: ProcsRlimit}); err != nil {
			t.Fatal(err)
		}
		var lim unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_NPROC, &lim); err != nil || lim.Cur != 4096 || lim.Max != 4096 {
			t.Fatalf("RLIMIT_NPROC is %+v (%v), want 4096 soft and hard", lim, err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestBoundProcsByRlimit$", "-test.v")
	cmd.Env = append(os.Environ(), "LNK_TEST_BOUND_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("%v: %s", err, out)
	}
}
