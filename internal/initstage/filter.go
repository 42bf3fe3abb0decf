package initstage

import (
	_ "embed"

	"lnk.dev/lnk/internal/seccomp/bpfload"
)

// sandboxBPF is internal/seccomp's sandbox filter for amd64, generated
// by `go test ./internal/initstage -run TestEmbeddedFilter -update`.
//
//go:embed sandbox_amd64.bpf
var sandboxBPF []byte

// ErrNoSeccomp means the kernel refused to load the filter.
var ErrNoSeccomp = bpfload.ErrUnsupported

// SandboxBPF is the embedded filter (for the test that compares it).
func SandboxBPF() []byte { return sandboxBPF }

// loadFilter loads the sandbox's filter on the calling thread, which then
// execs (the new program inherits it).
func loadFilter() error { return bpfload.Load(sandboxBPF, false) }
