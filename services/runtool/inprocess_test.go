package runtool

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/procstat"
)

// TestCallRunsInProcess: a call's sandbox is started by the run tool
// itself (services/sandboxrun), no lnk between: walking up from the
// command, its bubblewrap's parent is the run tool's own process, and no
// process on the way is lnk. The kernel still records it (the sandbox's
// start is listed while it runs).
func TestCallRunsInProcess(t *testing.T) {
	a := testAgent(t, "")
	m := mark()
	done := make(chan error, 1)
	go func() {
		_, err := a.Run(context.Background(), Call{Argv: []string{"sleep", m}})
		done <- err
	}()
	if !waitFor(20*time.Second, func() bool { return len(processesWith("sleep", m)) == 1 }) {
		t.Fatal("the call's command never ran")
	}
	pid, _ := strconv.Atoi(processesWith("sleep", m)[0])
	var chain []string
	for p, seen := pid, 0; p > 1 && seen < 16; seen++ {
		st, err := procstat.Read(p)
		if err != nil {
			t.Fatalf("reading %d: %v", p, err)
		}
		comm, _ := readComm(p)
		chain = append(chain, strconv.Itoa(p)+" "+comm)
		if comm == "lnk" {
			t.Fatalf("a process on the way up from the command is lnk: %v", chain)
		}
		if st.PPID == 0 {
			break
		}
		if st.PPID == os.Getpid() {
			if comm != "bwrap" {
				t.Fatalf("the run tool's child is %q, not bubblewrap: %v", comm, chain)
			}
			syscall.Kill(pid, syscall.SIGKILL) // its exit ends the call
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the call did not end with its command")
			}
			return
		}
		p = st.PPID
	}
	t.Fatalf("the command is no descendant of the run tool (pid %d): %v", os.Getpid(), chain)
}

// readComm is /proc/PID/comm.
func readComm(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b)), err
}
