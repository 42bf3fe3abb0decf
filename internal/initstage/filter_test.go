package initstage_test

import (
	"bytes"
	"flag"
	"os"
	"runtime"
	"testing"

	"lnk.dev/lnk/internal/initstage"
	"lnk.dev/lnk/internal/seccomp"
	"lnk.dev/lnk/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite sandbox_amd64.bpf from internal/seccomp")

// TestEmbeddedFilterMatchesLibseccomp proves lnk-init (built without cgo)
// loads exactly the filter internal/seccomp generates with libseccomp.
func TestEmbeddedFilterMatchesLibseccomp(t *testing.T) {
	testenv.Require(t, runtime.GOARCH == "amd64", "amd64 (the only embedded filter)")
	want, err := seccomp.SandboxBPF()
	testenv.Require(t, err == nil, "libseccomp")
	if *update {
		if err := os.WriteFile("sandbox_amd64.bpf", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := initstage.SandboxBPF(); !bytes.Equal(got, want) {
		t.Fatalf("the embedded filter (%d bytes) differs from libseccomp's (%d bytes): run go test ./internal/initstage -run TestEmbeddedFilter -update", len(got), len(want))
	}
}
