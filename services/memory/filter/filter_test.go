package filter

import (
	"bytes"
	"flag"
	"os"
	"runtime"
	"testing"

	"lnk.dev/lnk/internal/seccomp"
	"lnk.dev/lnk/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the *_amd64.bpf files from internal/seccomp")

// The policies each embedded filter was compiled from.
var policies = map[string]struct {
	p        seccomp.Policy
	embedded []byte
}{
	"service_amd64.bpf":       {seccomp.Policy{Exec: false, Sockets: seccomp.SocketsUnix}, serviceBPF},
	"service_model_amd64.bpf": {seccomp.Policy{Exec: false, Sockets: seccomp.SocketsInet}, serviceModelBPF},
	"extractor_amd64.bpf":     {seccomp.Policy{Exec: true, Sockets: seccomp.SocketsNone}, extractorBPF},
	"child_amd64.bpf":         {seccomp.Policy{Exec: false, Sockets: seccomp.SocketsNone}, childBPF},
}

// TestEmbeddedFiltersAreLibseccomps proves lnk-memory (which links no
// libseccomp) loads exactly what internal/seccomp generates for each
// policy.
func TestEmbeddedFiltersAreLibseccomps(t *testing.T) {
	testenv.Require(t, runtime.GOARCH == "amd64", "amd64 (the only embedded filters)")
	for file, p := range policies {
		want, err := seccomp.BPF(seccomp.Denials(p.p))
		testenv.Require(t, err == nil, "libseccomp")
		if *update {
			if err := os.WriteFile(file, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !bytes.Equal(p.embedded, want) {
			t.Errorf("%s (%d bytes) differs from libseccomp's (%d bytes): run go test ./services/memory/filter -update", file, len(p.embedded), len(want))
		}
	}
}
