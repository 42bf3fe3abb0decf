package main

import (
	_ "embed"

	"lnk.dev/lnk/internal/seccomp/bpfload"
)

// brokerBPF is internal/seccomp's filter for this broker (Policy{Sockets:
// SocketsInetOnly}: no exec, no ptrace, only inet and inet6 sockets; no
// unix socket: the ones it uses were handed to it, or made before the
// filter loads, so it can reach no named socket such as the kernel's)
// for amd64, compiled by libseccomp and embedded so this program links no
// libseccomp and is built static: one program to load, no dynamic loader,
// nothing to re-read when landlock confines it. Rewritten by `go test
// ./cmd/lnk-netbroker -run TestEmbeddedFilter -update`;
// TestEmbeddedFilterMatchesLibseccomp proves the bytes are libseccomp's.
//
//go:embed filter_amd64.bpf
var brokerBPF []byte

// loadFilter sets NO_NEW_PRIVS and loads brokerBPF on every thread of
// this process (SECCOMP_FILTER_FLAG_TSYNC), as libseccomp's load did.
func loadFilter() error { return bpfload.Load(brokerBPF, true) }
