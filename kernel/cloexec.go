package kernel

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// markInheritedCloexec marks every fd above 2 close-on-exec: whatever
// the kernel's own parent left open (a shell's, a service manager's)
// must never pass on to a broker, which gets exactly what it is handed.
func markInheritedCloexec() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && fl&unix.FD_CLOEXEC == 0 {
			unix.FcntlInt(uintptr(fd), unix.F_SETFD, fl|unix.FD_CLOEXEC)
		}
	}
	return nil
}
