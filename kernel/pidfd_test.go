package kernel

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// FuzzPidfdInfo: parsePidfdInfo never panics, and a pid it returns is a
// positive number the text holds on its "Pid:" line.
func FuzzPidfdInfo(f *testing.F) {
	f.Add([]byte("pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nPid:\t4242\nNSpid:\t4242\n"))
	f.Add([]byte("Pid:\t-1\n"))
	f.Add([]byte("pos:\t0\nflags:\t02100000\nmnt_id:\t27\nino:\t12\n"))
	f.Add([]byte("Pid: 12x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		pid, err := parsePidfdInfo(b)
		if err == nil && pid <= 0 {
			t.Fatalf("pid %d accepted", pid)
		}
	})
}

// TestPidfdPidTellsAPidfdFromAnotherFd: a child's pidfd names its pid;
// a pipe is no pidfd, and a reaped child's pidfd names none.
func TestPidfdPidTellsAPidfdFromAnotherFd(t *testing.T) {
	pidfd := -1
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{PidFD: &pidfd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(pidfd), "pidfd")
	defer f.Close()
	if pid, err := pidfdPid(pidfd); err != nil || pid != cmd.Process.Pid {
		t.Fatalf("a live child: %d, %v (want %d)", pid, err, cmd.Process.Pid)
	}
	cmd.Wait()
	if pid, err := pidfdPid(pidfd); err == nil {
		t.Fatalf("a reaped child's pidfd named pid %d", pid)
	}
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	if _, err := pidfdPid(int(r.Fd())); err == nil {
		t.Fatal("a pipe passed as a pidfd")
	}
}
