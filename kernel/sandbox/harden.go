package sandbox

import (
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/initstage"
)

// DefaultMaxProcs bounds each sandbox's processes (threads count): a
// fork bomb inside ends at it, never at the owner's own limit.
const DefaultMaxProcs = 4096

// Bound is one resource bound, as --json-status says it.
type Bound struct {
	Max int    `json:"max,omitempty"` // 0: none
	By  string `json:"by"`            // "pid_max", "rlimit", "cgroup v1", "cgroup v2" or "none"
	Why string `json:"why,omitempty"` // with "none": why not
}

// capsForInit are the capabilities bubblewrap leaves lnk-init, in the
// sandbox's own user namespace only: to remount noexec and set the pid
// namespace's pid_max (CAP_SYS_ADMIN), and to empty the bounding set
// before the command runs (CAP_SETPCAP). lnk-init drops them all
// (internal/initstage, harden.go) before landlock and seccomp.
var capsForInit = []string{"--cap-drop", "ALL", "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP"}

// harden fills the plan's noexec mounts and process bound, and what the
// status says of them. It runs once every mount is listed but the
// root's read-only remount: a program [commands] grants inside a folder
// made noexec is bound again at its own path, a mount of its own that
// stays executable.
func (s *Sandbox) harden(c *caps.Compiled, opt Options) {
	s.Plan.NoExec = append(s.Plan.NoExec, "/tmp", "/dev")
	var noexec []string
	for _, f := range c.Folders {
		if !s.execGranted(f.Path) && !slices.Contains(s.Plan.NoExec, f.Path) && !system(f.Path) {
			s.Plan.NoExec = append(s.Plan.NoExec, f.Path)
			noexec = append(noexec, f.Path)
		}
	}
	for _, r := range s.Plan.Paths {
		if !r.Exec || slices.Contains(opt.ExtraExec, r.Path) || !under(r.Path, noexec) || under(r.Path, c.Hidden) {
			continue
		}
		// From an fd opened without following a link, as the folders
		// are: the sandbox may write where the program is, and a link it
		// left there must never bind what it names. One that cannot be
		// opened so is not bound, and stays refused (noexec).
		file, err := openNoLinks(r.Path)
		if err != nil {
			continue
		}
		if fi, err := file.Stat(); err != nil || !fi.Mode().IsRegular() {
			file.Close()
			continue
		}
		s.args = append(s.args, "--ro-bind-fd")
		s.fdArg(file)
		s.args = append(s.args, r.Path)
	}
	if os.Getuid() != 0 {
		// bubblewrap (not setuid) nests a user namespace of its own for
		// an owner other than root, which would leave lnk-init its two
		// capabilities only there, none where the mounts are: the
		// sandbox's user is root of the sandbox's one user namespace
		// instead (the owner outside), as it is for root, with no
		// capability once lnk-init is done.
		s.args = append(s.args, "--uid", "0", "--gid", "0")
	}
	s.Plan.MaxProcs = DefaultMaxProcs
	s.Enforced.Processes, s.Plan.ProcsBy = procsBound(DefaultMaxProcs)
	s.boundMemory(opt)     // memory.go
	if s.Enforced.noexec { // else degraded, said: lnk-init goes on without
		s.Enforced.NoExec = append([]string(nil), s.Plan.NoExec...)
	}
}

// system reports whether folder p is a system folder, inside one or
// holds one (/usr, or /): where the libraries are, which every program
// maps executable, so never noexec.
func system(p string) bool {
	for _, d := range systemDirs {
		if p == d || under(p, []string{d}) || under(d, []string{p}) || p == "/" {
			return true
		}
	}
	return false
}

// under reports whether p is strictly inside one of dirs.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// procsBound says how n processes are held: the pid namespace's own
// pid_max where the kernel has one (Linux 6.14), whoever runs lnk; else
// RLIMIT_NPROC, which Linux counts per user namespace (5.14), and never
// holds against the real root.
func procsBound(n int) (Bound, string) {
	if kernelAtLeast(6, 14) {
		return Bound{Max: n, By: "pid_max"}, initstage.ProcsPidMax
	}
	if os.Getuid() == 0 {
		return Bound{By: "none", Why: "RLIMIT_NPROC never holds root, and this kernel has no pid_max per pid namespace (Linux 6.14)"}, initstage.ProcsRlimit
	}
	return Bound{Max: n, By: "rlimit"}, initstage.ProcsRlimit
}

// kernelAtLeast reports whether the running kernel is major.minor or
// later; a release it cannot read is not.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(leadingDigits(parts[1]))
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || (ma == major && mi >= minor)
}

// leadingDigits is s up to its first non-digit ("14" of "14-rc1").
func leadingDigits(s string) string {
	for i, r := range s {
		if r < '0' || r > '9' {
			return s[:i]
		}
	}
	return s
}
