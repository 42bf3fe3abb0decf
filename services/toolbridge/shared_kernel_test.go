package toolbridge

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// TestSharedToolThroughTheKernelsBridge: an agent's start's confined
// bridge reaches a shared tool through the hub the kernel dials (and
// starts, a real lnk-toolhub), a session's call answered by the one
// server the hub runs; a second session is the same server's.
func TestSharedToolThroughTheKernelsBridge(t *testing.T) {
	requireSandbox(t)
	testenv.Bin(t, "lnk-toolhub")
	home := testenv.Home(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sr := &sharedRig{rig: &rig{home: home}, mark: "kernel-" + randomHex(8)}
	d := &tooldef.Definition{Name: "test", Command: []string{self, "-lnk-mark=" + sr.mark}, Env: map[string]*secret.Value{}, Shared: true}
	d.Env["LNK_TEST_MCP_SERVER"], _ = secret.FromString("1")
	t.Cleanup(func() {
		for _, pid := range sr.hubPids() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		waitFor(t, "the hub's server to be gone", func() bool { return len(sr.marked()) == 0 })
	})
	br := kernelRoute(t, home, d)
	for range 2 {
		sid := br.session(t)
		if _, body, err := br.post(sid, echoCall); err != nil || !strings.Contains(body, "bench") {
			t.Fatalf("a call through the hub: %v %s", err, body)
		}
	}
	if hubs, servers := sr.hubPids(), sr.marked(); len(hubs) != 1 || len(servers) != 1 {
		t.Errorf("%d hubs and %d servers of the shared tool, want one each", len(hubs), len(servers))
	}
}
