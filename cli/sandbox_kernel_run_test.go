package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/kernel/proto"
)

// kernelStatus is `lnk kernel status --json`.
func kernelStatus(t *testing.T) proto.StatusReply {
	t.Helper()
	out, errs, code := lnkRun(t, nil, "kernel", "status", "--json")
	var st proto.StatusReply
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("lnk kernel status --json: exit %d: %s%s", code, out, errs)
	}
	return st
}

// parentOf is pid's parent, from /proc/PID/status.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var ppid int
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "PPid:"); ok {
			fmt.Sscan(strings.TrimSpace(v), &ppid)
		}
	}
	return ppid
}

// TestAgentRunsProxyIsTheKernelsAndItsDeathEndsTheRun: `lnk sandbox run
// --agent` starts no proxy of its own: the kernel (started on demand)
// runs it as its child, the start's. A run whose proxy is killed with
// SIGKILL mid-run is never left without it: the kernel ends the start
// closed, and lnk stops the sandbox (its command never finishes) and
// fails, saying why. The positive control: the same agent's run whose
// proxy lives finishes its command, exit 0.
func TestAgentRunsProxyIsTheKernelsAndItsDeathEndsTheRun(t *testing.T) {
	bin := lnkBin(t)
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	testenv.Home(t)
	for _, args := range [][]string{{"agent", "create", "demo"}, {"agent", "allow", "demo", "--internet", "--command", "echo", "--command", "sh", "--command", "sleep"}} {
		if out, errs, code := lnkRun(t, nil, args...); code != 0 {
			t.Fatalf("lnk %v: exit %d: %s%s", args, code, out, errs)
		}
	}
	if out, errs, code := lnkRun(t, nil, "sandbox", "run", "--agent", "demo", "--", "echo", "ran"); code != 0 || !strings.Contains(out, "ran") {
		t.Fatalf("the run with its proxy: exit %d: %s%s", code, out, errs)
	}

	const nap = "3001.25" // this run's command, told apart from any other
	run := exec.Command(bin, "sandbox", "run", "--agent", "demo", "--", "sh", "-c", "echo up; exec sleep "+nap)
	var errb bytes.Buffer
	run.Stderr = &errb
	run.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	ended := make(chan struct{})
	go func() { waitErr = run.Wait(); close(ended) }()
	t.Cleanup(func() {
		run.Process.Kill()
		<-ended
	})
	// The command runs (its sandbox set up, the proxy holding its
	// listener) once it says so.
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "up\n" {
		t.Fatalf("the sandboxed command did not start: %q %v\n%s", line, err, errb.String())
	}
	var proxy, kernelPID int
	for deadline := time.Now().Add(30 * time.Second); proxy == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no proxy among the kernel's brokers within 30 s\n%s", errb.String())
		}
		if _, _, code := lnkRun(t, nil, "kernel", "status"); code != 0 {
			continue
		}
		st := kernelStatus(t)
		kernelPID = st.PID
		for _, b := range st.Brokers {
			if strings.HasPrefix(b.Name, "net/") && b.PID != 0 {
				proxy = b.PID
			}
		}
	}
	if pp := parentOf(t, proxy); pp != kernelPID || pp == run.Process.Pid {
		t.Fatalf("the proxy (pid %d) is the child of %d, not of the kernel (%d)", proxy, pp, kernelPID)
	}
	if err := syscall.Kill(proxy, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
		ee, ok := waitErr.(*exec.ExitError)
		if !ok || ee.ExitCode() == 0 {
			t.Errorf("the run whose proxy died ended %v, want a failure", waitErr)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the run went on for 60 s after its proxy was killed\n%s", errb.String())
	}
	if !strings.Contains(errb.String(), "the kernel ended the sandbox: the start ended closed: its broker net/") {
		t.Errorf("lnk does not say why the run ended:\n%s", errb.String())
	}
	if ps, _ := exec.Command("pgrep", "-f", "sleep "+nap).Output(); len(ps) > 0 {
		t.Errorf("the sandboxed command outlived its run: pids %s", ps)
	}
	for _, s := range kernelStatus(t).Starts {
		t.Errorf("a start outlived its run: %+v", s)
	}
}
