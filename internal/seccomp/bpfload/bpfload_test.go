package bpfload

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A damaged program is refused before anything is set: the process
// keeps the privileges it had.
func TestDamagedFilterRefusedBeforeAnythingIsSet(t *testing.T) {
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range [][]byte{nil, {1, 2, 3}, make([]byte, 12)} {
		if err := Load(prog, false); err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Fatalf("Load(%d bytes) = %v, want the filter called damaged", len(prog), err)
		}
	}
	if after, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); after != nnp {
		t.Fatalf("NO_NEW_PRIVS went from %d to %d for a refused filter", nnp, after)
	}
}
