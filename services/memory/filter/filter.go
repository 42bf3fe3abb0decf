// Package filter is Link Memory's seccomp filters, compiled by
// internal/seccomp with libseccomp and embedded as raw BPF, so that
// lnk-memory links no libseccomp and stays one static program
// (internal/seccomp/bpfload loads them). There are three, one for each
// process of the service, each over the common deny list (ptrace,
// process_vm_*, mount, namespaces, keyctl, bpf, io_uring, …):
//
//   - Service, the process holding every agent's files and index: no
//     exec at all (execve and execveat refused), AF_UNIX sockets only
//     (its own socket; no network). ServiceModel is the same with
//     AF_INET and AF_INET6 sockets too, loaded only where the owner
//     named a model ($LNK_MEMORY_MODEL): its landlock domain then lets
//     it connect to that one TCP port only (ABI 4).
//   - Extractor, the one process the service starts, before it loads its
//     own filter, to start the document extractors: exec (its own
//     program only, which its landlock domain alone lets it run), no
//     socket.
//   - Child, each document's extractor, loaded before it reads a byte:
//     no exec, no socket.
//
// So the service, which a crafted index or document would most want to
// take, can start nothing: the document extractors are started by a
// process that holds nothing but its own program (package extract).
// `go test ./services/memory/filter -update` rewrites the bytes;
// TestEmbeddedFiltersAreLibseccomps proves they are libseccomp's.
//
// # Security
//
// Holds nothing. May: set NO_NEW_PRIVS and load a filter on every thread
// of the calling process. Trusts the bytes embedded in the binary.
package filter

import (
	_ "embed"

	"lnk.dev/lnk/internal/seccomp/bpfload"
)

//go:embed service_amd64.bpf
var serviceBPF []byte

//go:embed service_model_amd64.bpf
var serviceModelBPF []byte

//go:embed extractor_amd64.bpf
var extractorBPF []byte

//go:embed child_amd64.bpf
var childBPF []byte

// ErrUnsupported is returned where the kernel filters no system call (or
// no filter is built for this architecture): Link Memory then does not run.
var ErrUnsupported = bpfload.ErrUnsupported

// Service confines the memory service: no exec, AF_UNIX sockets only.
func Service() error { return bpfload.Load(serviceBPF, true) }

// ServiceModel confines the memory service that calls a model: no exec,
// AF_UNIX, AF_INET and AF_INET6 sockets.
func ServiceModel() error { return bpfload.Load(serviceModelBPF, true) }

// Extractor confines the extractors' starter: exec, no socket.
func Extractor() error { return bpfload.Load(extractorBPF, true) }

// Child confines a document's extractor: no exec, no socket.
func Child() error { return bpfload.Load(childBPF, true) }
