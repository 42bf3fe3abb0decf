package kernel

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// confinedPeer says why the peer pid (pinned by pidfd where the OS has
// SO_PEERPIDFD) is no client of the owner's own, or "" if it is one. The
// socket serves the owner's own clients (lnk, its services); a process
// with the owner's uid that Link confined is none of them, however it
// reached the socket:
//
//   - a process this kernel started (a broker) or any process below it;
//   - a process under a seccomp filter with no_new_privs, as every broker,
//     proxy and sandboxed command Link starts is.
//
// What cannot be learned (the peer's /proc entry unreadable, or the peer
// gone and its pid perhaps another's) refuses.
func confinedPeer(pid int, pidfd *os.File) string {
	if pid <= 0 {
		return "the peer's pid is unknown"
	}
	self := os.Getpid()
	if pid != self { // an in-process client of the kernel's own is the kernel
		nnp, filtered, err := confinement(pid)
		switch {
		case err != nil:
			return "the peer's confinement cannot be learned: " + err.Error()
		case nnp && filtered:
			return "a process Link confined (seccomp filter, no_new_privs)"
		}
		for p, seen := pid, 0; p > 1 && seen < 4096; seen++ {
			pp, err := parentOf(p)
			if err != nil {
				return "the peer's ancestry cannot be learned: " + err.Error()
			}
			if pp == self {
				return "a process the kernel started, or one below it"
			}
			p = pp
		}
	}
	// What was read is the peer's own only if the pid still names it.
	if pidfd != nil {
		if err := unix.PidfdSendSignal(int(pidfd.Fd()), 0, nil, 0); err != nil {
			return "the peer is gone"
		}
	}
	return ""
}

// confinement reads pid's NoNewPrivs and Seccomp lines in its status.
func confinement(pid int) (nnp, filtered bool, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false, false, err
	}
	var sawNNP, sawSeccomp bool
	for _, line := range bytes.Split(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch string(k) {
		case "NoNewPrivs":
			sawNNP, nnp = true, string(v) != "0"
		case "Seccomp":
			sawSeccomp, filtered = true, string(v) != "0"
		}
	}
	if !sawNNP || !sawSeccomp {
		// A kernel without seccomp says no Seccomp line: no process is
		// filtered there, but no_new_privs alone is not Link's mark.
		if sawNNP {
			return nnp, false, nil
		}
		return false, false, errors.New("its status says nothing of no_new_privs")
	}
	return nnp, filtered, nil
}

// parentOf is pid's parent, from its stat (the fields after the command,
// which may hold any byte, come after the last ')').
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command in /proc/%d/stat", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	return strconv.Atoi(string(f[1]))
}
