package toolbridge

import (
	"runtime"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// A bridge started with AdaptProcs (as lnk sandbox run starts its own)
// runs its process on one P from the start (internal/procs); one without
// never touches GOMAXPROCS.
func TestStartAdaptsProcsOnlyWhenAsked(t *testing.T) {
	all := runtime.GOMAXPROCS(0)
	testenv.Require(t, all >= 2, "two CPUs or more (one has nothing to adapt)")
	defer runtime.GOMAXPROCS(all)
	home := testenv.Home(t)
	r, err := Start(home, SandboxName("plain"), &Bridge{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if got := runtime.GOMAXPROCS(0); got != all {
		t.Fatalf("a bridge that did not ask changed GOMAXPROCS to %d", got)
	}
	r, err = Start(home, SandboxName("adapt"), &Bridge{AdaptProcs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("a bridge that asked runs on %d Ps, want 1", got)
	}
}
