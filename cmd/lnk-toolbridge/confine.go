package main

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/seccomp"
)

// landlockReexecMarker is set in a re-executed process (see
// internal/landlock), so the fds are taken once.
const landlockReexecMarker = "LNK_LANDLOCK_REEXEC"

// policy: the bridge executes nothing (the kernel starts the tools'
// servers) and makes no socket of any family: every connection it
// serves is passed on its proxy's channel, every server's stdio or hub
// connection handed by the kernel.
var policy = seccomp.Policy{Exec: false, Sockets: seccomp.SocketsNone}

// confine confines the whole process: landlock to reading beneath the
// tools' definitions folder (fd 6) and nothing else (re-executing once
// where the kernel cannot confine every thread at once: the fds in
// inherit survive that), then seccomp.
func confine(inherit []int, degraded bool, logf func(string)) error {
	for _, fd := range inherit {
		unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0) // for landlock's re-exec
	}
	_, err := landlock.Restrict(landlock.Beneath(defsFD, landlock.Read))
	for _, fd := range inherit {
		unix.CloseOnExec(fd)
	}
	if err != nil {
		if !degraded || !errors.Is(err, landlock.ErrUnsupported) {
			return fmt.Errorf("landlock: %w (--degraded runs without it)", err)
		}
		logf("degraded: no landlock: " + err.Error())
	}
	if err := seccomp.ConfineBroker(policy); err != nil {
		if !degraded {
			return fmt.Errorf("seccomp: %w (--degraded runs without it)", err)
		}
		logf("degraded: no seccomp: " + err.Error())
	}
	return nil
}
