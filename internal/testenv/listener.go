package testenv

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// LoopbackListener is a TCP socket listening on 127.0.0.1 at a port of
// the kernel's choosing, as the sandbox's first stage makes the relay's,
// and its address. The caller hands it on or closes it.
func LoopbackListener(t testing.TB) (fd int, addr string) {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, 8); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fd, fmt.Sprintf("127.0.0.1:%d", sa.(*unix.SockaddrInet4).Port)
}
