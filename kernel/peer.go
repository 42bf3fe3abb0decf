package kernel

import (
	"os"

	"lnk.dev/lnk/internal/peercred"
	"lnk.dev/lnk/internal/procstat"
)

// confinedPeer says why the peer pid (pinned by pidfd where the OS has
// SO_PEERPIDFD) is no client of the owner's own, or "" if it is one. The
// socket serves the owner's own clients (lnk, its services); a process
// with the owner's uid that Link confined is none of them, however it
// reached the socket:
//
//   - a process this kernel started (a broker) or any process below it,
//     but a tool's server it started for a bridge (toolServer says which),
//     which runs unconfined with the owner's rights by its definition, as
//     a server lnk started did: the run and file tools start their calls'
//     sandboxes through the kernel;
//   - a process under a seccomp filter with no_new_privs, as every broker,
//     proxy and sandboxed command Link starts is (peercred.Confined, the
//     one reading of it, which the agents' way in applies too).
//
// What cannot be learned (the peer's /proc entry unreadable, or the peer
// gone and its pid perhaps another's) refuses.
func confinedPeer(pid int, pidfd *os.File, toolServer func(int) bool) string {
	if pid <= 0 {
		return "the peer's pid is unknown"
	}
	self := os.Getpid()
	if pid != self { // an in-process client of the kernel's own is the kernel
		if why := peercred.Confined(pid); why != "" {
			return why
		}
		for p, seen := pid, 0; p > 1 && seen < 4096; seen++ {
			st, err := procstat.Read(p)
			if err != nil {
				return "the peer's ancestry cannot be learned: " + err.Error()
			}
			if st.PPID == self {
				if toolServer != nil && toolServer(p) {
					break // a tool's server the kernel started, or below it, unconfined: the owner's
				}
				return "a process the kernel started, or one below it"
			}
			p = st.PPID
		}
	}
	// What was read is the peer's own only if the pid still names it.
	if pidfd != nil && peercred.Gone(pidfd) {
		return "the peer is gone"
	}
	return ""
}
