package resolve

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The raw system calls of [Root.ReadFileRaw]: see it for when they are
// allowed. Each returns the errno as unix's wrappers do.

// fstat is unix.Fstat, raw if raw.
func fstat(fd int, st *unix.Stat_t, raw bool) error {
	if !raw {
		return unix.Fstat(fd, st)
	}
	if _, _, e := unix.RawSyscall(unix.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0); e != 0 {
		return e
	}
	return nil
}

func rawRead(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// closeFd is unix.Close, raw if raw.
func closeFd(fd int, raw bool) {
	if !raw {
		unix.Close(fd)
		return
	}
	unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
}
