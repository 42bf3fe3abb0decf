// Package confine is lnk-keybroker's confinement, as data: landlock
// allows reading and writing beneath the agent keys' folder and nothing
// else on any file system, and no TCP; seccomp refuses exec and every
// socket (the broker's channels are inherited, it makes none), on top of
// the common deny list for brokers.
//
// # Security
//
// Holds nothing. May: restrict the calling process for good. Refuses to
// return success on a kernel without landlock or seccomp unless degraded
// is set, and then says what is missing.
package confine

import (
	"errors"
	"fmt"

	"lnk.dev/lnk/internal/landlock"
	"lnk.dev/lnk/internal/seccomp"
)

// Policy is the broker's seccomp policy: no exec, no sockets.
var Policy = seccomp.Policy{Exec: false, Sockets: seccomp.SocketsNone}

// Rules are the broker's landlock rules: the keys folder, read and write.
func Rules(keysDir int) []landlock.Rule {
	return []landlock.Rule{landlock.Beneath(keysDir, landlock.Read|landlock.Write)}
}

// Landlock confines the process's files to the keys folder. It may
// re-execute the program (see internal/landlock); call it before marking
// inherited fds close-on-exec. It returns what was missing, if degraded.
func Landlock(keysDir int, degraded bool) (string, error) {
	if _, err := landlock.Restrict(Rules(keysDir)...); err != nil {
		if degraded && errors.Is(err, landlock.ErrUnsupported) {
			return "landlock: " + err.Error(), nil
		}
		return "", fmt.Errorf("landlock: %w (--degraded runs without it)", err)
	}
	return "", nil
}

// Seccomp loads the broker's filter.
func Seccomp(degraded bool) (string, error) {
	if err := seccomp.ConfineBroker(Policy); err != nil {
		if degraded {
			return "seccomp: " + err.Error(), nil
		}
		return "", fmt.Errorf("seccomp: %w (--degraded runs without it)", err)
	}
	return "", nil
}
