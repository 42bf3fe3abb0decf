// Package cloexec marks what a process inherited close-on-exec. A
// process of Link's that starts others (the kernel its brokers, lnk
// sandbox run its proxy and bwrap) calls it first: whatever its own
// parent left open (a shell's, a service manager's) must never pass on to
// a child, which gets exactly the fds it is handed.
package cloexec

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// MarkInherited marks every fd above 2 close-on-exec.
func MarkInherited() error {
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
