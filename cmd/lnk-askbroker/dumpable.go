package main

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// undumpable takes this process out of core dumps and out of reach of
// the owner's other processes (/proc/PID/mem, ptrace): the broker holds
// the owner's terminal and each question's text and code, the launcher
// the desktop's variables. Called after confinement, whose re-exec
// would make the process dumpable again; a dialog it starts is
// dumpable once more (exec resets it), and shows only the question.
func undumpable() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	return nil
}
