package testenv

import (
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// stopKernel stops the kernel a test's lnk started on demand under home
// (the one whose socket is home/.lnk/run/kernel.sock, found by the
// socket's peer pid), and waits for it to end: a test's kernel never
// outlives the test's HOME. Nothing listens: nothing to do.
func stopKernel(t testing.TB, home string) {
	sock := filepath.Join(home, ".lnk", "run", "kernel.sock")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if unix.Connect(fd, &unix.SockaddrUnix{Name: sock}) != nil {
		return
	}
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil || cred.Pid <= 0 {
		return
	}
	pidfd, err := unix.PidfdOpen(int(cred.Pid), 0)
	if err != nil {
		return
	}
	defer unix.Close(pidfd)
	if err := unix.PidfdSendSignal(pidfd, unix.SIGTERM, nil, 0); err != nil {
		return
	}
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if n, _ := unix.Poll(fds, 1000); n > 0 {
			return
		}
	}
	t.Logf("the test's kernel (pid %d) did not end within 20 s of SIGTERM", cred.Pid)
}
