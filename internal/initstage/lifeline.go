package initstage

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// The lifeline is the read end of a pipe whose only write end lnk holds
// (close-on-exec, never handed to anything) while it waits beside
// bubblewrap. lnk gone, the pipe hangs up. bubblewrap's own
// --die-with-parent is set in its child too late to cover a lnk killed
// while bubblewrap sets up (bubblewrap 0.8): the lifeline covers that.
// In the exec shape lnk is bubblewrap after exec and holds no write end:
// no lifeline is passed there.

// errLnkGone ends lnk-init before it execs anything: lnk is gone, or
// stopped the sandbox while it started (its proxy could not start).
var errLnkGone = errors.New("lnk, which started this sandbox, is gone or stopped it: not starting the command")

// lnkGone reports whether the lifeline fd has hung up: every write end
// closed, lnk dead.
func lnkGone(fd int) bool {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, 0)
		if err == unix.EINTR {
			continue
		}
		return err != nil || (n > 0 && pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0)
	}
}

// armLifeline makes the kernel itself SIGKILL this process group (lnk-init
// become the command, and what the command starts in its group)
// the moment the lifeline hangs up: O_ASYNC with F_SETSIG SIGKILL and the
// group as owner. Armed before lnk-init confines itself, so neither
// landlock's signal scoping nor the seccomp filter stands between; the
// proxy holds the fd for as long as the sandbox runs (the command never
// does). Then bubblewrap's PID 1, left without children, exits, and the
// pid namespace with it.
func armLifeline(fd int) error {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETOWN, -unix.Getpgrp()); err != nil {
		return fmt.Errorf("lifeline: set owner: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETSIG, int(unix.SIGKILL)); err != nil {
		return fmt.Errorf("lifeline: set signal: %w", err)
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl|unix.O_ASYNC)
	}
	if err != nil {
		return fmt.Errorf("lifeline: async: %w", err)
	}
	if lnkGone(fd) { // hung up before it was armed
		return errLnkGone
	}
	return nil
}
