package resolve

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// openat2 is unix.Openat2 without its allocation: a name shorter than
// stackName bytes is made NUL-terminated in a buffer on the stack rather
// than copied to the heap. name has passed validate, so it holds no NUL.
// raw makes it a raw system call, outside the Go scheduler's system call
// path: only for [Root.ReadFileRaw], on a local filesystem.
func openat2(dirfd int, name string, how *unix.OpenHow, raw bool) (int, error) {
	var buf [stackName]byte
	var p *byte
	if len(name) < len(buf) {
		copy(buf[:], name)
		buf[len(name)] = 0
		p = &buf[0]
	} else {
		var err error
		if p, err = unix.BytePtrFromString(name); err != nil {
			return -1, err
		}
	}
	sys := unix.Syscall6
	if raw {
		sys = unix.RawSyscall6
	}
	fd, _, e := sys(unix.SYS_OPENAT2, uintptr(dirfd), uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// stackName is the longest name, NUL included, openat2 copies on the stack.
const stackName = 256
