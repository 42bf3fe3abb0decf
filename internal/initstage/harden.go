package initstage

import (
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// harden does, on this thread, what needs the two capabilities
// bubblewrap leaves lnk-init in the sandbox's own user namespace
// (CAP_SYS_ADMIN, CAP_SETPCAP: build.go's --cap-add), then drops every
// capability for good:
//
//   - remounts each of the plan's NoExec mount points noexec (the mount
//     only, not those on it), so a file there is never mapped
//     executable: landlock's execute right stops execve, not ld.so
//     mapping a file it was given to run;
//   - bounds the sandbox's processes (MaxProcs);
//   - empties the bounding, ambient, permitted, effective and
//     inheritable sets, so the command starts with none.
//
// A step that fails refuses the start, but where the kernel lacks
// mount_setattr (ENOSYS) and the plan is degraded.
func harden(p *Plan) error {
	for _, m := range p.NoExec {
		err := unix.MountSetattr(unix.AT_FDCWD, m, unix.AT_SYMLINK_NOFOLLOW, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOEXEC})
		if errors.Is(err, unix.ENOSYS) && p.Degraded {
			break
		}
		if err != nil {
			return fmt.Errorf("noexec %s: %w", m, err)
		}
	}
	if err := boundProcs(p); err != nil {
		return err
	}
	return dropCaps()
}

// pidMaxPath is the pid namespace's own pid_max (Linux 6.14 and later):
// lnk-init, the first process but bubblewrap's of a pid namespace that
// is the sandbox's alone, sets it for that namespace only.
const pidMaxPath = "/proc/sys/kernel/pid_max"

// boundProcs holds the sandbox to p.MaxProcs processes: the pid
// namespace's pid_max (its pids, threads' too, run 1 to pid_max-1, so
// no more than MaxProcs tasks at once, whoever runs lnk), or
// RLIMIT_NPROC, which since Linux 5.14 counts the tasks of the sandbox's
// own user namespace alone (and never binds the real root).
func boundProcs(p *Plan) error {
	switch {
	case p.MaxProcs == 0:
		return nil
	case p.ProcsBy == ProcsPidMax:
		fd, err := unix.Open(pidMaxPath, unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err != nil {
			return fmt.Errorf("process bound: %w", err)
		}
		defer unix.Close(fd)
		v := []byte(strconv.Itoa(p.MaxProcs + 1))
		if n, err := unix.Write(fd, v); err != nil || n != len(v) {
			return fmt.Errorf("process bound: pid_max %s: %v", v, err)
		}
		return nil
	default:
		lim := &unix.Rlimit{Cur: uint64(p.MaxProcs), Max: uint64(p.MaxProcs)}
		if err := unix.Setrlimit(unix.RLIMIT_NPROC, lim); err != nil {
			return fmt.Errorf("process bound: RLIMIT_NPROC: %w", err)
		}
		return nil
	}
}

// dropCaps empties every capability set of this thread, which then
// execs: the bounding set first (CAP_SETPCAP last of all), the ambient
// set, then permitted, effective and inheritable.
func dropCaps() error {
	for c := 0; c <= 63; c++ {
		if c == unix.CAP_SETPCAP {
			continue
		}
		if err := dropBound(c); err != nil {
			return err
		}
	}
	if err := dropBound(unix.CAP_SETPCAP); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("drop ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// dropBound drops capability c from the bounding set if it is there;
// past the kernel's last capability, the read fails and there is none.
func dropBound(c int) error {
	in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
	if err != nil || in == 0 {
		return nil
	}
	if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
		return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
	}
	return nil
}
