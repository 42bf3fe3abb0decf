package peercred

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Confined says why the process pid is one Link confined (under a
// seccomp filter with no_new_privs, as every broker, proxy and sandboxed
// command Link starts is), or "" if it is not one. What cannot be learned
// (its /proc entry unreadable) says so, and is as much a refusal.
func Confined(pid int) string {
	if pid <= 0 {
		return "the peer's pid is unknown"
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "the peer's confinement cannot be learned: " + err.Error()
	}
	nnp, filtered, err := ParseConfinement(b)
	switch {
	case err != nil:
		return "the peer's confinement cannot be learned: " + err.Error()
	case nnp && filtered:
		return "a process Link confined (seccomp filter, no_new_privs)"
	}
	return ""
}

// ParseConfinement reads a /proc/PID/status: whether no_new_privs is set
// and whether a seccomp mode is. A status without a NoNewPrivs line
// cannot say, and is an error; one without a Seccomp line is a kernel
// without seccomp, where nothing is filtered. Of a line given twice,
// the first counts.
func ParseConfinement(status []byte) (nnp, filtered bool, err error) {
	var sawNNP, sawSeccomp bool
	for _, line := range bytes.Split(status, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch string(k) {
		case "NoNewPrivs":
			if !sawNNP {
				sawNNP, nnp = true, string(v) != "0"
			}
		case "Seccomp":
			if !sawSeccomp {
				sawSeccomp, filtered = true, string(v) != "0"
			}
		}
	}
	if !sawNNP {
		return false, false, errors.New("its status says nothing of no_new_privs")
	}
	return nnp, filtered, nil
}

// PidFD is the pidfd the kernel took of c's peer when it connected
// (SO_PEERPIDFD, Linux 6.5+; close-on-exec), which pins the peer's
// identity for as long as it is held; nil where the OS has none.
func PidFD(c *net.UnixConn) *os.File {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil
	}
	var f *os.File
	raw.Control(func(fd uintptr) {
		if pfd, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD); err == nil && pfd >= 0 {
			unix.CloseOnExec(pfd)
			f = os.NewFile(uintptr(pfd), "peer-pidfd")
		}
	})
	return f
}

// Gone says whether the process pidfd names has ended, so that its pid
// may since name another and what was read of it is not its own.
func Gone(pidfd *os.File) bool {
	return unix.PidfdSendSignal(int(pidfd.Fd()), 0, nil, 0) != nil
}

// OwnersOwn refuses a peer that is not one of the owner's own
// unconfined processes: another uid's (SameUser), or one Link confined
// (Confined), whatever reached the socket; with SO_PEERPIDFD, a peer
// gone before its confinement was read refuses too. This is the rule the
// kernel's socket applies to its clients, less its own ancestry rule.
func OwnersOwn(c *net.UnixConn) (*unix.Ucred, error) {
	cred, err := SameUser(c)
	if err != nil {
		return cred, err
	}
	pidfd := PidFD(c)
	if pidfd != nil {
		defer pidfd.Close()
	}
	if why := Confined(int(cred.Pid)); why != "" {
		return cred, fmt.Errorf("pid %d is not the owner's own client: %s", cred.Pid, why)
	}
	if pidfd != nil && Gone(pidfd) {
		return cred, fmt.Errorf("pid %d is not the owner's own client: the peer is gone", cred.Pid)
	}
	return cred, nil
}
