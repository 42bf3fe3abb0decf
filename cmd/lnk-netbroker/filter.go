package main

import (
	_ "embed"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// brokerBPF is internal/seccomp's filter for this broker (Policy{Sockets:
// SocketsInet}: no exec, no ptrace, only unix and inet sockets) for
// amd64, compiled by libseccomp and embedded so this program links no
// libseccomp and is built static: one program to load, no dynamic loader,
// nothing to re-read when landlock confines it. Rewritten by `go test
// ./cmd/lnk-netbroker -run TestEmbeddedFilter -update`;
// TestEmbeddedFilterMatchesLibseccomp proves the bytes are libseccomp's.
//
//go:embed filter_amd64.bpf
var brokerBPF []byte

// errNoSeccomp means the kernel refused the filter (or none is built for
// this architecture).
var errNoSeccomp = errors.New("the kernel has no seccomp filter support")

type sockFprog struct {
	len    uint16
	filter unsafe.Pointer
}

// loadFilter sets NO_NEW_PRIVS and loads brokerBPF on every thread of
// this process (SECCOMP_FILTER_FLAG_TSYNC), as libseccomp's load did.
func loadFilter() error {
	if runtime.GOARCH != "amd64" {
		return fmt.Errorf("%w: no filter is built for %s", errNoSeccomp, runtime.GOARCH)
	}
	if len(brokerBPF) == 0 || len(brokerBPF)%8 != 0 {
		return fmt.Errorf("the embedded filter is damaged (%d bytes)", len(brokerBPF))
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	prog := sockFprog{len: uint16(len(brokerBPF) / 8), filter: unsafe.Pointer(&brokerBPF[0])}
	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(&prog)
	switch {
	case e == unix.EINVAL || e == unix.ENOSYS:
		return fmt.Errorf("%w (%v)", errNoSeccomp, e)
	case e != 0:
		return fmt.Errorf("load: %w", e)
	case r != 0:
		return fmt.Errorf("load: thread %d could not take the filter", r)
	}
	return nil
}
