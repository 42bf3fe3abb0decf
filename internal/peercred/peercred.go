// Package peercred is the one reading of who is at the other end of a
// unix socket: the kernel's SO_PEERCRED, taken when the peer connected
// (or listened), never what the peer says of itself.
//
// # Security
//
// A peer whose credentials can't be read is refused, never taken as the
// owner's: SameUser fails closed. OwnersOwn (confined.go) is the rule
// for a socket only the owner's own clients reach (the kernel's, an
// agent's way in): SameUser, and not a process Link confined (seccomp
// filter with no_new_privs), read from /proc with the peer pinned by
// SO_PEERPIDFD where the OS has it; what can't be read refuses.
package peercred

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// Of is the credentials the kernel recorded for c's peer.
func Of(c *net.UnixConn) (*unix.Ucred, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	if cerr != nil {
		return nil, fmt.Errorf("who is at the other end cannot be learned: %w", cerr)
	}
	return cred, nil
}

// SameUser refuses a peer not of this process's uid, as the kernel says.
func SameUser(c *net.UnixConn) (*unix.Ucred, error) {
	cred, err := Of(c)
	if err != nil {
		return nil, err
	}
	if int(cred.Uid) != os.Getuid() {
		return cred, fmt.Errorf("pid %d runs as uid %d, not this service's %d", cred.Pid, cred.Uid, os.Getuid())
	}
	return cred, nil
}
