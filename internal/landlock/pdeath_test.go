package landlock_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/testenv"
)

// middle is a parent as lnk is one: it starts a program that confines
// itself (the "sleeper" child, which re-execs to do so below landlock
// ABI 8) with PR_SET_PDEATHSIG SIGKILL from a locked thread, says its
// pid, and waits to be killed.
func middle() {
	runtime.LockOSThread()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "LNK_LL_CHILD=sleeper")
	cmd.Stdout = os.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Println("start:", err)
		return
	}
	fmt.Println("pid", cmd.Process.Pid)
	time.Sleep(time.Minute)
}

// sleeper confines itself from a thread other than the main one, as a
// broker's main goroutine may run anywhere, then sleeps.
func sleeper() {
	runtime.LockOSThread() // the main thread stays with this goroutine
	done := make(chan error)
	go func() { _, err := landlock.Restrict(); done <- err }()
	if err := <-done; err != nil {
		fmt.Println("restrict:", err)
		return
	}
	fmt.Println("confined")
	time.Sleep(time.Minute)
}

// A program that confines itself keeps the parent-death signal it was
// started with: killing its parent kills it, re-exec or not. (lnk's
// brokers outlived a SIGKILLed lnk: the re-exec ran from a thread whose
// own signal is 0.)
func TestConfinedProgramDiesWithItsParent(t *testing.T) {
	testenv.Require(t, landlock.ABI() > 0, "landlock")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mid := exec.Command(exe, "-test.run=^$")
	mid.Env = append(os.Environ(), "LNK_LL_CHILD=middle")
	out, err := mid.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := mid.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { mid.Process.Kill(); mid.Wait() }()
	sc := bufio.NewScanner(out)
	pid, confined := 0, false
	for (pid == 0 || !confined) && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "pid "):
			pid, _ = strconv.Atoi(strings.TrimPrefix(line, "pid "))
		case line == "confined":
			confined = true
		default:
			t.Fatalf("child said %q", line)
		}
	}
	if pid == 0 || !confined {
		t.Fatalf("the confined program never said it ran (pid %d)", pid)
	}
	defer unix.Kill(pid, unix.SIGKILL)
	mid.Process.Kill()
	mid.Wait()
	for deadline := time.Now().Add(15 * time.Second); alive(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the confined program (pid %d) outlived its parent by 15 s", pid)
		}
	}
}

// alive says whether pid runs: neither gone nor a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
