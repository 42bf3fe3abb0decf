package kernel

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A process the kernel started is refused as a client, and so is what
// runs below it, but for a tool's server the kernel started for a
// bridge (the run and file tools start their calls' sandboxes through
// the kernel), and what runs below that server unconfined. The test's
// process stands for the kernel: confinedPeer knows the kernel by its
// own pid.
func TestPeerBelowTheKernelIsRefusedButItsToolServers(t *testing.T) {
	start := func() (child, grandchild int) {
		cmd := exec.Command("sh", "-c", "sleep 30 & echo $!; wait")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		buf := make([]byte, 32)
		n, _ := out.Read(buf)
		gc, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
		if err != nil {
			t.Fatalf("the grandchild's pid: %q", buf[:n])
		}
		t.Cleanup(func() { exec.Command("kill", strconv.Itoa(gc)).Run() })
		return cmd.Process.Pid, gc
	}
	server, belowServer := start()
	broker, belowBroker := start()
	time.Sleep(50 * time.Millisecond) // the grandchildren's /proc entries name their parent
	isServer := func(pid int) bool { return pid == server }
	for _, c := range []struct {
		name    string
		pid     int
		refused bool
	}{
		{"a tool's server", server, false},
		{"below a tool's server", belowServer, false},
		{"another child (a broker)", broker, true},
		{"below another child", belowBroker, true},
	} {
		why := confinedPeer(c.pid, nil, isServer)
		if c.refused != (why != "") {
			t.Errorf("%s (pid %d): refused %v (%q), want refused %v", c.name, c.pid, why != "", why, c.refused)
		}
	}
	// Without the servers' set, every child is refused: the rule the
	// exception narrows.
	if why := confinedPeer(server, nil, nil); !strings.Contains(why, "kernel started") {
		t.Errorf("a child with no servers' set: %q", why)
	}
}
