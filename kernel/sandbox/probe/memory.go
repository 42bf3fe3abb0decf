package probe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// memoryVerdict touches arg bytes (past the sandbox's bound) in a child,
// this program again as `lnk sandbox probe` with the one probe "touch":
// Closed if the kernel killed it (SIGKILL, the cgroup's OOM killer) or
// refused the memory; Open if it touched it all; Broken otherwise.
func memoryVerdict(arg string) (string, string) {
	spec, err := json.Marshal(Spec{Probes: []Probe{{Name: "touch", Kind: "touch", Arg: arg, Expect: Closed}}})
	if err != nil {
		return Broken, err.Error()
	}
	var out bytes.Buffer
	cmd := exec.Command("/proc/self/exe", "sandbox", "probe")
	cmd.Stdin = bytes.NewReader(spec)
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		return Closed, "killed (SIGKILL) touching " + arg + " bytes"
	}
	var rs []Result
	if err == nil && json.Unmarshal(out.Bytes(), &rs) == nil && len(rs) == 1 {
		return rs[0].Got, rs[0].Detail
	}
	return Broken, fmt.Sprintf("the child neither touched it nor was killed: %v: %.300s", err, out.String())
}

// touchVerdict maps arg bytes of anonymous memory and writes a byte in
// each page: Open once all are touched, Closed if the map is refused.
func touchVerdict(arg string) (string, string) {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 {
		return Broken, "no size in " + strconv.Quote(arg)
	}
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return Closed, "mmap refused: " + err.Error()
	}
	for i := 0; i < len(b); i += os.Getpagesize() {
		b[i] = 1
	}
	unix.Munmap(b)
	return Open, arg + " bytes touched, past the bound"
}
