package probe

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// udpSent is what the UDP probe reports inside: it sent, and only the
// host (Outside.Settle) can say whether anything arrived.
const udpSent = "sent"

// nsVerdict: arg is "<name>:<the host's inode>"; Open if this process is
// in the host's namespace of that name.
func nsVerdict(arg string) (string, string) {
	name, host, _ := strings.Cut(arg, ":")
	ino, err := nsInode("/proc/self/ns/" + name)
	if err != nil {
		return Broken, err.Error()
	}
	if strconv.FormatUint(ino, 10) == host {
		return Open, fmt.Sprintf("%s:[%d] is the host's", name, ino)
	}
	return Closed, ""
}

// sessionVerdict: arg is "<the checking lnk's sid>:<the host's pid
// namespace inode>". bubblewrap's --new-session makes a session inside
// the sandbox, so its leader is a process of the sandbox's: getsid
// names it. Without it the session is the host's: inside a pid namespace
// of its own getsid gives 0 (its leader is not in the namespace), in the
// host's pid namespace the checking lnk's sid.
func sessionVerdict(arg string) (string, string) {
	hostSid, hostPidNS, _ := strings.Cut(arg, ":")
	sid, err := unix.Getsid(0)
	if err != nil {
		return Broken, err.Error()
	}
	pidNS, err := nsInode("/proc/self/ns/pid")
	if err != nil {
		return Broken, err.Error()
	}
	switch {
	case sid == 0:
		return Open, "the session's leader is outside the sandbox"
	case strconv.FormatUint(pidNS, 10) == hostPidNS && strconv.Itoa(sid) == hostSid:
		return Open, "the checking lnk's session " + hostSid
	}
	return Closed, ""
}

// sendUDP sends the token to the host's port: arg is "<addr> <token>".
// landlock has no rule for UDP, so only the sandbox's own network keeps
// it from arriving; whether it did, the host says.
func sendUDP(arg string) (string, string) {
	addr, token, _ := strings.Cut(arg, " ")
	to, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return Broken, err.Error()
	}
	c, err := net.ListenUDP("udp", nil) // unconnected: a port unreachable never fails the next send
	if err != nil {
		return Closed, err.Error()
	}
	defer c.Close()
	for range 3 {
		if _, err := c.WriteToUDP([]byte(token), to); err != nil {
			return Closed, err.Error()
		}
	}
	return udpSent, ""
}
