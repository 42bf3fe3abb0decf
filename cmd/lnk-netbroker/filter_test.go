package main

import (
	"bytes"
	"flag"
	"os"
	"runtime"
	"testing"

	"lnk.dev/lnk/internal/seccomp"
	"lnk.dev/lnk/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite filter_amd64.bpf from internal/seccomp")

// TestEmbeddedFilterMatchesLibseccomp proves lnk-netbroker (built without
// cgo) loads exactly the filter internal/seccomp generates with
// libseccomp for its policy, the one seccomp.ConfineBroker loaded.
func TestEmbeddedFilterMatchesLibseccomp(t *testing.T) {
	testenv.Require(t, runtime.GOARCH == "amd64", "amd64 (the only embedded filter)")
	want, err := seccomp.BPF(seccomp.Denials(seccomp.Policy{Sockets: seccomp.SocketsInetOnly}))
	testenv.Require(t, err == nil, "libseccomp")
	if *update {
		if err := os.WriteFile("filter_amd64.bpf", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(brokerBPF, want) {
		t.Fatalf("the embedded filter (%d bytes) differs from libseccomp's (%d bytes): run go test ./cmd/lnk-netbroker -run TestEmbeddedFilter -update", len(brokerBPF), len(want))
	}
}
