package sandbox_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/procstat"
	"lnk.dev/lnk/internal/testenv"
)

// TestGrantsRunBrokersAreTheKernels: lnk sandbox run with flag grants
// and the internet on (a run that needs a proxy) is a start of no agent
// in the kernel: while it runs, the kernel lists a start ("" its agent)
// with the sandbox's pid, its proxy (lnk-netbroker) is the kernel's
// child, not lnk's, and the granted folder is read through the kernel's
// handle; at its end the kernel revokes it and no start is left. The
// control: the same run with the internet off needs no broker, execs
// bubblewrap from lnk and leaves the kernel nothing to hold.
func TestGrantsRunBrokersAreTheKernels(t *testing.T) {
	w := newWorld(t)
	t.Cleanup(func() { lnk(t, "kernel", "stop") })
	testenv.Bin(t, "lnk-init")
	testenv.Bin(t, "lnk-netbroker")
	testenv.Bin(t, "lnk-fsbroker")
	testenv.Bin(t, "lnk-keybroker")
	marker := fmt.Sprintf("700.%d%d", os.Getpid(), rand.IntN(1e6))
	cmd := exec.Command(testenv.Bin(t, "lnk"), "sandbox", "run", "--internet", "--read", w.data, "--command", "sh", "--command", "sleep", "--",
		"sh", "-c", "read l < "+filepath.Join(w.data, "f")+"; echo $l; exec sleep "+marker)
	cmd.Env = append(os.Environ(), "HOME="+w.home)
	cmd.Dir = w.home
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errs strings.Builder
	cmd.Stderr = &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	line, _ := bufio.NewReader(out).ReadString('\n')
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	if line != "granted-content\n" {
		cmd.Process.Kill()
		<-done
		t.Fatalf("the sandbox read %q; lnk: %s", line, errs.String())
	}
	pid := attached(t, w.home, "")
	kpid, _ := kernelStarts(t, w.home)
	// The proxy is looked for until it is seen or 10 s pass: on a loaded
	// machine /proc can be read while a process is between fork and exec.
	proxies := 0
	for end := time.Now().Add(10 * time.Second); proxies == 0 && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		proxies = kernelsProxies(t, kpid, cmd.Process.Pid)
	}
	if proxies == 0 {
		t.Fatalf("no proxy is the kernel's (pid %d) child while the run's sandbox (pid %d) runs", kpid, pid)
	}
	cmd.Process.Signal(os.Interrupt)
	<-done
	done <- nil
	gone(t, marker)
	if _, m := kernelStarts(t, w.home); len(m) != 0 {
		t.Fatalf("the kernel holds starts after the run: %v", m)
	}
	if n := auditLines(t, w.home, "revoke", ""); n == 0 {
		t.Fatal("no revocation logged at the run's end")
	}

	code, outs, errs2 := lnk(t, "sandbox", "run", "--internet=false", "--read", w.data, "--command", "cat", "--", "cat", filepath.Join(w.data, "f"))
	if code != 0 || outs != "granted-content" {
		t.Fatalf("the run with no broker: exit %d %q %s", code, outs, errs2)
	}
	if _, m := kernelStarts(t, w.home); len(m) != 0 {
		t.Fatalf("a run with no broker left a start: %v", m)
	}
}

// lnk sandbox check of flag grants that need a proxy runs as a start of
// the kernel's, as a run does: the kernel attaches its sandbox and
// revokes the start at its end, and it starts the proxy (the start's
// brokers), never lnk.
func TestGrantsCheckIsAKernelStart(t *testing.T) {
	w := newWorld(t)
	t.Cleanup(func() { lnk(t, "kernel", "stop") })
	testenv.Bin(t, "lnk-fsbroker")
	testenv.Bin(t, "lnk-keybroker")
	testenv.Bin(t, "lnk-askbroker")
	code, out, errs := lnk(t, "sandbox", "check", "--internet")
	if code != 0 {
		t.Fatalf("check: exit %d\n%s\n%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(w.home, ".lnk", "log", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{`"request":"attach"`, `"kind":"revoke"`} {
		if !strings.Contains(log, want) {
			t.Errorf("the check's audit log has no %s: its sandbox was no start of the kernel's\n%s", want, log)
		}
	}
}

// kernelsProxies counts the lnk-netbroker processes whose parent is the
// kernel kpid; one whose parent is lnk (lnkPID) fails t.
func kernelsProxies(t *testing.T, kpid, lnkPID int) int {
	proxies := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); !strings.HasPrefix(filepath.Base(strings.SplitN(string(b), "\x00", 2)[0]), "lnk-netbroker") {
			continue
		}
		st, err := procstat.Read(p)
		if err != nil {
			continue
		}
		if st.PPID == lnkPID {
			t.Fatalf("a proxy (pid %d) is lnk's child, not the kernel's", p)
		}
		if st.PPID == kpid {
			proxies++
		}
	}
	return proxies
}
