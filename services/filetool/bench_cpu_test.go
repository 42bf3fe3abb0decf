package filetool_test

import (
	"syscall"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// usageOf is testenv.UsageOf: a process's CPU time and context switches.
func usageOf(pid int) testenv.Usage { return testenv.UsageOf(pid) }

// usages sums usageOf over pids.
func usages(pids []int) testenv.Usage { return testenv.UsageOf(pids...) }

// processUsage is this process's CPU time so far, user and system, and
// its threads' context switches (voluntary and not).
func processUsage() (time.Duration, int64) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), ru.Nvcsw + ru.Nivcsw
}
