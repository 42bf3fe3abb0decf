package scmrights

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// recvmsg is unix.Recvmsg without its allocation (a sockaddr buffer a
// connected socket never fills): one iovec over p, control data in oob.
func recvmsg(fd int, p, oob []byte, flags int) (n, oobn, recvflags int, err error) {
	if len(p) == 0 || len(oob) == 0 {
		return 0, 0, 0, unix.EINVAL
	}
	var iov unix.Iovec
	iov.Base = &p[0]
	iov.SetLen(len(p))
	var msg unix.Msghdr
	msg.Iov = &iov
	msg.SetIovlen(1)
	msg.Control = &oob[0]
	msg.SetControllen(len(oob))
	r, _, e := unix.Syscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), uintptr(flags))
	if e != 0 {
		return 0, 0, 0, e
	}
	return int(r), int(msg.Controllen), int(msg.Flags), nil
}
