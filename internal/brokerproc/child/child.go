// Package child is a broker's side of [brokerproc]: it takes the channel
// the kernel handed as fd 3 and the extra files after it, and closes
// every other inherited fd above 2.
//
// # Security
//
// Holds: fd 3 and the extra fds, nothing else once Channel has run. May:
// close fds, set close-on-exec. Trusts: LNK_BROKER_FDS only as a count,
// capped at [MaxExtra]. Refuses: a fd 3 that is not a SOCK_SEQPACKET
// socket.
package child

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// EnvFDs names the variable holding how many extra files follow fd 3.
const EnvFDs = "LNK_BROKER_FDS"

// MaxExtra caps the extra files a broker takes.
const MaxExtra = 64

// ChannelFD is the channel's fd number in a broker.
const ChannelFD = 3

// Channel returns the channel (fd 3) and the extra files (fd 4, …), and
// closes every other inherited fd above them. With cloexec it marks them close-on-exec
// too; a broker that must re-exec itself to confine every thread
// (internal/landlock) passes false and marks them later with [CloseOnExec].
func Channel(cloexec bool) (*os.File, []*os.File, error) {
	n, err := strconv.Atoi(os.Getenv(EnvFDs))
	if err != nil || n < 0 || n > MaxExtra {
		return nil, nil, fmt.Errorf("%s=%q is not a count of 0–%d fds", EnvFDs, os.Getenv(EnvFDs), MaxExtra)
	}
	typ, err := unix.GetsockoptInt(ChannelFD, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil || typ != unix.SOCK_SEQPACKET {
		return nil, nil, fmt.Errorf("fd %d is not a SOCK_SEQPACKET socket (type %d, %v): start this through the kernel", ChannelFD, typ, err)
	}
	last := ChannelFD + n
	if err := closeStray(last); err != nil {
		return nil, nil, err
	}
	if cloexec {
		if err := CloseOnExec(ChannelFD, last); err != nil {
			return nil, nil, err
		}
	}
	ch := os.NewFile(ChannelFD, "channel")
	extra := make([]*os.File, n)
	for i := range extra {
		extra[i] = os.NewFile(uintptr(ChannelFD+1+i), "extra-"+strconv.Itoa(i))
	}
	return ch, extra, nil
}

// CloseOnExec marks fds first..last close-on-exec.
func CloseOnExec(first, last int) error {
	for fd := first; fd <= last; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
			return fmt.Errorf("fd %d: close-on-exec: %w", fd, err)
		}
	}
	return nil
}

// closeStray closes every inherited fd above last. An inherited fd is one
// without close-on-exec (exec closed the rest); the Go runtime's own fds
// are all close-on-exec, so they are left alone.
func closeStray(last int) error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing inherited fds: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= last {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // gone already (the listing's own fd), or the runtime's
		}
		unix.Close(fd)
	}
	return nil
}
