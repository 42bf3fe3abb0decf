package initstage

import (
	_ "embed"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sandboxBPF is internal/seccomp's sandbox filter for amd64, generated
// by `go test ./internal/initstage -run TestEmbeddedFilter -update`.
//
//go:embed sandbox_amd64.bpf
var sandboxBPF []byte

// ErrNoSeccomp means the kernel refused to load the filter.
var ErrNoSeccomp = errors.New("the kernel has no seccomp filter support")

// SandboxBPF is the embedded filter (for the test that compares it).
func SandboxBPF() []byte { return sandboxBPF }

type sockFprog struct {
	len    uint16
	filter unsafe.Pointer
}

// loadFilter loads the sandbox's filter on the calling thread, which then
// execs (the new program inherits it).
func loadFilter() error {
	if runtime.GOARCH != "amd64" {
		return fmt.Errorf("%w: no filter is built for %s", ErrNoSeccomp, runtime.GOARCH)
	}
	if len(sandboxBPF) == 0 || len(sandboxBPF)%8 != 0 {
		return fmt.Errorf("seccomp: the embedded filter is damaged (%d bytes)", len(sandboxBPF))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	prog := sockFprog{len: uint16(len(sandboxBPF) / 8), filter: unsafe.Pointer(&sandboxBPF[0])}
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(&prog)
	if e != 0 {
		if e == unix.EINVAL || e == unix.ENOSYS {
			return fmt.Errorf("%w (%v)", ErrNoSeccomp, e)
		}
		return fmt.Errorf("seccomp: load: %w", e)
	}
	return nil
}
