package filetool_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// usage is what a process and its threads spent: CPU time on a core
// (schedstat, ns) and context switches (voluntary and not). Per call,
// these move far less with the machine's load than wall-clock time.
type usage struct{ cpuNS, switches int64 }

func usageOf(pid int) usage {
	var u usage
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		dir := fmt.Sprintf("/proc/%d/task/%s/", pid, t.Name())
		if b, err := os.ReadFile(dir + "schedstat"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				u.cpuNS += v
			}
		}
		b, _ := os.ReadFile(dir + "status")
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				u.switches += n
			}
		}
	}
	return u
}

// usages sums usageOf over pids.
func usages(pids []int) usage {
	var u usage
	for _, p := range pids {
		x := usageOf(p)
		u.cpuNS += x.cpuNS
		u.switches += x.switches
	}
	return u
}

// processUsage is this process's CPU time so far, user and system, and
// its threads' context switches (voluntary and not).
func processUsage() (time.Duration, int64) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Nvcsw + ru.Nivcsw
}
