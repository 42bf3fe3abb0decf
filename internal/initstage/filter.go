package initstage

import (
	_ "embed"
	"runtime"

	"lnk.dev/lnk/internal/seccomp/bpfload"
)

// sandboxBPF is internal/seccomp's sandbox filter for amd64, generated
// by `go test ./internal/initstage -run TestEmbeddedFilter -update`.
//
//go:embed sandbox_amd64.bpf
var sandboxBPF []byte

// ErrNoSeccomp means the kernel refused to load the filter.
var ErrNoSeccomp = bpfload.ErrUnsupported

// HasFilter reports whether a filter is built for this architecture:
// amd64's alone is, so elsewhere lnk-init loads none.
func HasFilter() bool { return runtime.GOARCH == "amd64" && len(sandboxBPF) > 0 }

// SandboxBPF is the embedded filter (for the test that compares it).
func SandboxBPF() []byte { return sandboxBPF }

// loadFilter loads the sandbox's filter on the calling thread, which then
// execs (the new program inherits it).
func loadFilter() error { return bpfload.Load(sandboxBPF, false) }
