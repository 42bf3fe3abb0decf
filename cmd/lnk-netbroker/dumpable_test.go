package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/testenv"
)

// TestMain lets this test binary be the owner's other process: with
// LNK_TEST_READ_MEM=PID it opens /proc/PID/mem, reads a word where the
// program's text begins, says ok or the errno, and ends.
func TestMain(m *testing.M) {
	if pid := os.Getenv("LNK_TEST_READ_MEM"); pid != "" {
		fmt.Println(readMem(pid))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func readMem(pid string) string {
	f, err := os.Open("/proc/" + pid + "/mem")
	if err != nil {
		return errName(err)
	}
	defer f.Close()
	// Any mapped address serves; Go programs built here start at 0x400000.
	var b [8]byte
	if _, err := f.ReadAt(b[:], 0x400000); err != nil {
		return errName(err)
	}
	return "ok"
}

func errName(err error) string {
	var e unix.Errno
	if errors.As(err, &e) {
		return unix.ErrnoName(e)
	}
	return err.Error()
}

// TestLnkAndNetbrokerMemoryUnreadable: while `lnk sandbox run --agent`
// runs with a sealed secret, another process of the same owner cannot
// read lnk's or its lnk-netbroker's memory through /proc/PID/mem (both
// are undumpable), where it reads a dumpable program of that owner's
// (the positive control). The owner is unprivileged: root reads any
// memory, so as root the test runs lnk, the reader and the control as
// the user lnktest (scripts/test-as-user.sh runs it as lnktest too).
func TestLnkAndNetbrokerMemoryUnreadable(t *testing.T) {
	_, err := exec.LookPath("bwrap")
	testenv.Require(t, err == nil, "bubblewrap (bwrap)")
	var cred *syscall.Credential
	home := testenv.Home(t)
	if os.Geteuid() == 0 {
		u, err := user.Lookup("lnktest")
		testenv.Require(t, err == nil, "the unprivileged user lnktest (useradd -m lnktest)")
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(home, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := os.MkdirTemp("", "lnk-dumpable-") // t.TempDir's parent is 0700
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bin) })
	os.Chmod(bin, 0o755)
	for _, name := range []string{"lnk", "lnk-init", "lnk-keybroker", "lnk-fsbroker", "lnk-netbroker"} {
		copyFile(t, testenv.Bin(t, name), filepath.Join(bin, name))
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reader := filepath.Join(bin, "reader.test")
	copyFile(t, self, reader)
	as := func(cmd *exec.Cmd) *exec.Cmd {
		cmd.Env = []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin"}
		cmd.Dir = home
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		return cmd
	}
	lnk := func(stdin string, args ...string) {
		t.Helper()
		cmd := as(exec.Command(filepath.Join(bin, "lnk"), args...))
		cmd.Stdin = strings.NewReader(stdin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("lnk %v: %v\n%s", args, err, out)
		}
	}
	lnk("", "agent", "create", "demo")
	lnk(sealedValue, "secret", "create", "API_KEY", "--internet-host", "api.localhost")
	lnk("", "secret", "add", "API_KEY", "--agent", "demo")
	lnk("", "agent", "allow", "demo", "--command", "/bin/sh")

	run := as(exec.Command(filepath.Join(bin, "lnk"), "sandbox", "run", "--agent", "demo", "--", "/bin/sh", "-c", "echo READY; read line"))
	stdin, err := run.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errf := tempFile(t, "stderr")
	run.Stderr = errf
	run.WaitDelay = 30 * time.Second
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); run.Wait() })
	if sc := bufio.NewScanner(stdout); !sc.Scan() || sc.Text() != "READY" {
		e, _ := os.ReadFile(errf.Name())
		t.Fatalf("the sandbox did not start:\n%s", e)
	}
	control := as(exec.Command("/bin/sleep", "60"))
	if err := control.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { control.Process.Kill(); control.Wait() })

	read := func(pid int) string {
		t.Helper()
		cmd := as(exec.Command(reader))
		cmd.Env = append(cmd.Env, "LNK_TEST_READ_MEM="+strconv.Itoa(pid))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the reader: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	netbroker := kernelProxy(t, home)
	for _, p := range []struct {
		name string
		pid  int
	}{{"lnk", run.Process.Pid}, {"lnk-netbroker", netbroker}} {
		if got := read(p.pid); got != "EACCES" && got != "EPERM" {
			t.Errorf("another process of the owner reading the memory of %s: %s, want it refused", p.name, got)
		}
	}
	// Sleep's text may start elsewhere: a refusal is the one answer that
	// matters, and the control must not get it.
	if got := read(control.Process.Pid); got == "EACCES" || got == "EPERM" {
		t.Errorf("reading a dumpable process of the owner's: %s, want it allowed (the positive control)", got)
	}
}

// kernelProxy is the lnk-netbroker the kernel started for an agent's run
// under home (its --home), failing unless its parent is the kernel: a
// run's proxy is the kernel's child, not lnk's.
func kernelProxy(t *testing.T, home string) int {
	t.Helper()
	argv := func(pid string) []string {
		b, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		a := argv(e.Name())
		if filepath.Base(a[0]) != "lnk-netbroker" || !strings.Contains(strings.Join(a, "\x00"), "--home\x00"+home+"\x00") {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+1:])
		if len(f) < 2 {
			continue
		}
		if pa := argv(f[1]); len(pa) < 3 || pa[1] != "kernel" || pa[2] != "run" {
			t.Fatalf("the proxy (pid %d) is the child of %s %q, not of the kernel", pid, f[1], pa)
		}
		return pid
	}
	t.Fatalf("no lnk-netbroker for %s among the processes", home)
	return 0
}
