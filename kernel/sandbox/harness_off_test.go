package sandbox_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lnk.dev/lnk/internal/procstat"
	"lnk.dev/lnk/internal/testenv"
	"lnk.dev/lnk/internal/wire"
	"lnk.dev/lnk/kernel/client"
	"lnk.dev/lnk/kernel/proto"
)

// lnk agent harness run with the agent's sandbox off is a start of the
// kernel's with no sandbox (kernel/start_unconfined.go): the proxy is
// the kernel's confined child, never lnk's; the command is recorded by
// its pidfd; lnk kernel end kills it and revokes the start.

// sandboxOff turns agent a's sandbox off (its no-sandbox setting) and
// returns agent.toml as it was.
func sandboxOff(t *testing.T, w harnessWorld) (file string, on []byte) {
	t.Helper()
	file = filepath.Join(w.agentDir, "Config", "agent.toml")
	on, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	write(t, file, string(on)+"no_sandbox = true\n")
	return file, on
}

// kernelStatus is lnk kernel status --json.
func kernelStatus(t *testing.T) *proto.StatusReply {
	t.Helper()
	code, out, errs := lnk(t, "kernel", "status", "--json")
	if code != 0 {
		t.Fatalf("lnk kernel status: exit %d\n%s", code, errs)
	}
	var st proto.StatusReply
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("lnk kernel status --json: %v\n%s", err, out)
	}
	return &st
}

// TestSandboxOffRunIsAKernelStart: the running command is listed by lnk
// kernel status as a start with no sandbox and its pid; its proxy is the
// broker net/START, a child of the kernel's (never of lnk's), confined
// (seccomp filter, no_new_privs); lnk kernel end a kills the command
// through its pidfd, ends the proxy, revokes the start (one line in the
// audit log) and lnk says the kernel ended the run.
func TestSandboxOffRunIsAKernelStart(t *testing.T) {
	w := newHarnessWorld(t)
	testenv.Bin(t, "lnk-netbroker")
	sandboxOff(t, w)
	run := exec.Command(testenv.Bin(t, "lnk"), "agent", "harness", "run", "a", "--", "sh", "-c", `echo "$$ $ALL_PROXY"; exec sleep 120`)
	out, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errs strings.Builder
	run.Stderr = &errs
	run.WaitDelay = 20 * time.Second
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Process.Kill(); run.Wait() })
	sc := bufio.NewScanner(out)
	if !sc.Scan() {
		run.Wait()
		t.Fatalf("the command said nothing:\n%s", errs.String())
	}
	said := strings.Fields(sc.Text())
	if len(said) != 2 || !strings.HasPrefix(said[1], "socks5h://lnk:") {
		t.Fatalf("the command was not told its proxy: %q", sc.Text())
	}
	pid, _ := strconv.Atoi(said[0])

	// lnk hands the kernel the command's pidfd once it runs: the
	// command may speak first.
	var st *proto.StatusReply
	var start uint64
	for deadline := time.Now().Add(10 * time.Second); start == 0; time.Sleep(20 * time.Millisecond) {
		st = kernelStatus(t)
		for _, s := range st.Starts {
			if s.Agent == "a" && s.Unconfined && s.PID == pid {
				start = s.Start
			}
		}
		if start == 0 && time.Now().After(deadline) {
			t.Fatalf("lnk kernel status lists no start of a with no sandbox and pid %d: %+v", pid, st.Starts)
		}
	}
	proxy := 0
	for _, b := range st.Brokers {
		if b.Name == "net/"+strconv.FormatUint(start, 10) {
			proxy = b.PID
		}
	}
	if proxy == 0 {
		t.Fatalf("the kernel runs no proxy for start %d: %+v", start, st.Brokers)
	}
	ps, err := procstat.Read(proxy)
	if err != nil {
		t.Fatal(err)
	}
	if ps.PPID != st.PID {
		t.Fatalf("the proxy (pid %d) is a child of pid %d, not of the kernel (pid %d)", proxy, ps.PPID, st.PID)
	}
	// It confines itself as it starts: its filter is on within moments.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		status, err := os.ReadFile("/proc/" + strconv.Itoa(proxy) + "/status")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(status), "Seccomp:\t2") && strings.Contains(string(status), "NoNewPrivs:\t1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the proxy is not confined:\n%s", status)
		}
	}
	// Nothing lnk started but the command (and the kernel, started on
	// demand): no proxy of its own.
	for _, child := range childrenOf(t, run.Process.Pid) {
		if child != pid && child != st.PID {
			comm, _ := os.ReadFile("/proc/" + strconv.Itoa(child) + "/comm")
			t.Errorf("lnk has a child besides the command: pid %d (%s)", child, strings.TrimSpace(string(comm)))
		}
	}

	if code, o, e := lnk(t, "kernel", "end", "a"); code != 0 {
		t.Fatalf("lnk kernel end a: exit %d\n%s\n%s", code, o, e)
	}
	err = run.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(errs.String(), "the kernel ended") {
		t.Fatalf("lnk agent harness run after lnk kernel end: %v, want a failure saying the kernel ended it\n%s", err, errs.String())
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the command (pid %d) still runs after lnk kernel end: %v", pid, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(proxy, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the proxy (pid %d) still runs after lnk kernel end", proxy)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := auditLines(t, w.home, "revoke", "pid "+strconv.Itoa(pid)+", killed"); n != 1 {
		b, _ := os.ReadFile(filepath.Join(w.home, ".lnk", "log", "audit.log"))
		t.Fatalf("%d revocations naming the command killed, want one:\n%s", n, b)
	}
	for _, s := range kernelStatus(t).Starts {
		if s.Start == start {
			t.Fatalf("start %d is still listed after lnk kernel end", start)
		}
	}
}

// TestUnconfinedStartRefusedWithTheSandboxOn: the kernel reads the
// agent's setting itself: a start with no sandbox for an agent whose
// sandbox is on is refused and logged, whatever the caller says; with
// the setting off (the positive control) the same request is granted,
// with no folder.
func TestUnconfinedStartRefusedWithTheSandboxOn(t *testing.T) {
	w := newHarnessWorld(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := client.Dial(ctx, w.home, testenv.Bin(t, "lnk"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	t.Cleanup(func() { lnk(t, "kernel", "stop") })
	req := func() *proto.StartRequest {
		return &proto.StartRequest{Agent: "a", Folders: []proto.Folder{}, Compile: true, Harness: "h", Profile: "run", Unconfined: true}
	}
	_, err = cl.Start(ctx, req())
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != proto.CodeRefused || !strings.Contains(we.Message, "runs in its sandbox") {
		t.Fatalf("an unconfined start of an agent whose sandbox is on: %v, want refused", err)
	}
	if n := auditLines(t, w.home, "refuse", "runs in its sandbox"); n != 1 {
		t.Fatalf("%d refusals logged, want one", n)
	}
	bad := req()
	bad.Profile = "check"
	if _, err := cl.Start(ctx, bad); !errors.As(err, &we) || we.Code != proto.CodeRefused {
		t.Fatalf("an unconfined start of a harness's check: %v, want refused", err)
	}
	sandboxOff(t, w)
	rep, err := cl.Start(ctx, req())
	if err != nil {
		t.Fatalf("with the sandbox off: %v", err)
	}
	if len(rep.Caps) != 0 {
		t.Fatalf("a start with no sandbox was granted folders: %+v", rep.Caps)
	}
}

// childrenOf lists pid's children.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := procstat.Read(p); err == nil && st.PPID == pid {
			out = append(out, p)
		}
	}
	return out
}
