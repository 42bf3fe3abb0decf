package landlock

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pdeathEnv carries the parent-death signal across the re-exec, with the
// parent's pid. The signal belongs to a task, not to a process: a
// program started with one (lnk starts its brokers with
// PR_SET_PDEATHSIG) has it on its main thread only, and the re-exec runs
// from the confined thread, whose own is 0 — so without this a confined
// broker would outlive the lnk that started it.
const pdeathEnv = "LNK_LANDLOCK_PDEATHSIG"

// startPdeathsig is the main thread's parent-death signal, read at init,
// which runs on the main thread.
var startPdeathsig int32

func init() {
	unix.Prctl(unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&startPdeathsig)), 0, 0, 0)
	if v, ok := os.LookupEnv(pdeathEnv); ok {
		os.Unsetenv(pdeathEnv)
		restorePdeathsig(v)
	}
}

// restorePdeathsig sets the signal v names ("<signal>:<parent pid>") on
// this, the re-executed program's main thread; if the parent is already
// gone it sends the signal to itself, as the kernel would have.
func restorePdeathsig(v string) {
	a, b, ok := strings.Cut(v, ":")
	sig, err1 := strconv.Atoi(a)
	ppid, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || sig < 1 || sig > 64 || ppid < 1 {
		return
	}
	startPdeathsig = int32(sig)
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(sig), 0, 0, 0)
	if os.Getppid() != ppid {
		unix.Kill(os.Getpid(), unix.Signal(sig))
	}
}
