package toolbridge

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/proto"
)

// TestBridgeKilledRightAfterAnAnswerLosesNoLine: the kernel reads a
// start's brokers' lines at most once per holdoff (kernel/broker_log.go),
// so a call wakes no kernel on its path; a line the bridge wrote before
// its answer waits in the kernel's pipe meanwhile. Two calls from a
// client on the proxy's socket, the bridge killed with SIGKILL the moment
// the second answer is read: each call is in the audit log exactly once,
// with its agent and outcome as the kernel writes them.
func TestBridgeKilledRightAfterAnAnswerLosesNoLine(t *testing.T) {
	requireSandbox(t)
	c := sandboxedCaller(t, testenv.Bin(t, "lnk"), true, `"id":7`, true)
	bridge := bridgeOf(t, c)
	c.call(t)
	c.call(t)
	if err := syscall.Kill(bridge, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	logged := func() (n int, log string) {
		b, _ := os.ReadFile(filepath.Join(c.home, ".lnk", "log", "audit.log"))
		for _, l := range strings.Split(string(b), "\n") {
			var e struct{ Kind, Agent, Request, Reason string }
			if json.Unmarshal([]byte(l), &e) == nil && e.Kind == "use" && e.Agent == "bench" && e.Request == "mcp echo" && e.Reason == "passed" {
				n++
			}
		}
		return n, string(b)
	}
	// The run ends closed with its bridge: once the kernel has said so
	// (the start's revocation), every line of the bridge's is in.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(c.home, ".lnk", "log", "audit.log"))
		if strings.Contains(string(b), `"kind":"revoke"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the start did not end after its bridge was killed:\n%s", b)
		}
	}
	if n, log := logged(); n != 2 {
		t.Fatalf("%d lines for the two echo calls answered before the bridge was killed, want 2:\n%s", n, log)
	}
}

// bridgeOf is the pid of the tool bridge of c's run, as lnk kernel
// status names it (tools/START).
func bridgeOf(t *testing.T, c *caller) int {
	t.Helper()
	cmd := exec.Command(testenv.Bin(t, "lnk"), "kernel", "status", "--json")
	cmd.Env = []string{"HOME=" + c.home, "PATH=/usr/local/bin:/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lnk kernel status: %v", err)
	}
	var st proto.StatusReply
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatal(err)
	}
	for _, b := range st.Brokers {
		if strings.HasPrefix(b.Name, "tools/") {
			return b.PID
		}
	}
	t.Fatalf("no tool bridge among the kernel's brokers: %+v", st.Brokers)
	return 0
}
