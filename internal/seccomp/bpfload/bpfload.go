// Package bpfload loads a seccomp filter already compiled to raw BPF,
// with no cgo: for Link's static programs (lnk-init, lnk-netbroker),
// which embed the bytes internal/seccomp builds with libseccomp (each
// program's test proves its embedded bytes equal libseccomp's).
//
// # Security
//
// Holds nothing. May: set NO_NEW_PRIVS and load a filter on the calling
// thread, or on every thread of the process (TSYNC). Trusts: the bytes
// it is given, which come from the binary itself (go:embed).
package bpfload

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnsupported means the kernel has no seccomp filter support (or no
// filter is built for this architecture).
var ErrUnsupported = errors.New("the kernel has no seccomp filter support")

type sockFprog struct {
	len    uint16
	filter unsafe.Pointer
}

// Load sets NO_NEW_PRIVS and loads prog, raw BPF built for amd64, on the
// calling thread, or with allThreads on every thread of the process
// (SECCOMP_FILTER_FLAG_TSYNC), as libseccomp's load does.
func Load(prog []byte, allThreads bool) error {
	if runtime.GOARCH != "amd64" {
		return fmt.Errorf("%w: no filter is built for %s", ErrUnsupported, runtime.GOARCH)
	}
	if len(prog) == 0 || len(prog)%8 != 0 {
		return fmt.Errorf("seccomp: the embedded filter is damaged (%d bytes)", len(prog))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	var flags uintptr
	if allThreads {
		flags = unix.SECCOMP_FILTER_FLAG_TSYNC
	}
	fp := sockFprog{len: uint16(len(prog) / 8), filter: unsafe.Pointer(&prog[0])}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fp)))
	runtime.KeepAlive(&fp)
	switch {
	case e == unix.EINVAL || e == unix.ENOSYS:
		return fmt.Errorf("%w (%v)", ErrUnsupported, e)
	case e != 0:
		return fmt.Errorf("seccomp: load: %w", e)
	case r != 0:
		return fmt.Errorf("seccomp: load: thread %d could not take the filter", r)
	}
	return nil
}
