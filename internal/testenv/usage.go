package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Usage is what processes and their threads spent: CPU time on a core
// (schedstat, ns) and context switches (voluntary and not). Per call,
// these move far less with the machine's load than wall-clock time, so
// benchmarks report them beside their timings.
type Usage struct{ CPUNS, Switches int64 }

// Plus is u and v together.
func (u Usage) Plus(v Usage) Usage { return Usage{u.CPUNS + v.CPUNS, u.Switches + v.Switches} }

// Minus is what u spent beyond v (u read after v).
func (u Usage) Minus(v Usage) Usage { return Usage{u.CPUNS - v.CPUNS, u.Switches - v.Switches} }

// UsageOf is what process pid and its threads have spent so far, from
// /proc; a pid of 0, or one gone, spent nothing.
func UsageOf(pids ...int) Usage {
	var u Usage
	for _, pid := range pids {
		if pid > 0 {
			u = u.Plus(usageOf(pid))
		}
	}
	return u
}

func usageOf(pid int) Usage {
	var u Usage
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		dir := fmt.Sprintf("/proc/%d/task/%s/", pid, t.Name())
		if b, err := os.ReadFile(dir + "schedstat"); err == nil {
			if f := strings.Fields(string(b)); len(f) > 0 {
				v, _ := strconv.ParseInt(f[0], 10, 64)
				u.CPUNS += v
			}
		}
		b, _ := os.ReadFile(dir + "status")
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				u.Switches += n
			}
		}
	}
	return u
}
