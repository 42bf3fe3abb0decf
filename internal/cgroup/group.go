package cgroup

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// Group is a delegated cgroup folder, held open, that sandboxes' cgroups
// are made in.
type Group struct {
	Version int    // 1 or 2
	Path    string // its folder, for messages
	dir     int
}

// By is how --json-status names the group's version.
func (g *Group) By() string { return "cgroup v" + strconv.Itoa(g.Version) }

// Close lets the folder go.
func (g *Group) Close() {
	if g != nil && g.dir >= 0 {
		unix.Close(g.dir)
		g.dir = -1
	}
}

// Delegated finds the cgroup this process may bound a sandbox's memory
// in: its own, on v2 where it has the memory controller and may enable
// it for its children, else on v1's memory hierarchy; owned by this
// user, in either. Where none is, it says why (never an error: lnk then
// bounds no memory, and says so).
func Delegated() (*Group, string) {
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, "/proc/self/cgroup: " + err.Error()
	}
	p2, p1 := ownPath(string(own))
	if p2 == "" && p1 == "" {
		return nil, "no cgroup of this process has the memory controller"
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, "/proc/self/mountinfo: " + err.Error()
	}
	m2, m1, ok2, ok1 := mounts(string(info))
	why := "no cgroup mount holds this process's cgroup"
	if p2 != "" && ok2 {
		g, w := open(2, folder(m2, p2))
		if g != nil {
			return g, ""
		}
		why = w
	}
	if p1 != "" && ok1 {
		g, w := open(1, folder(m1, p1))
		if g != nil {
			return g, ""
		}
		if p2 == "" || !ok2 {
			why = w
		} else {
			why += "; " + w
		}
	}
	return nil, why
}

// open holds folder dir as a group of version v if this user owns it
// (and its cgroup.procs, which a move into a child of it needs on v2)
// and it has the memory controller.
func open(v int, dir string) (*Group, string) {
	if dir == "" {
		return nil, "this process's cgroup is outside the cgroup mount"
	}
	fd, err := ownerfile.OpenPath(dir, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, dir + ": " + err.Error()
	}
	g := &Group{Version: v, Path: dir, dir: fd}
	if why := g.delegated(); why != "" {
		g.Close()
		return nil, why
	}
	return g, ""
}

// delegated says why g is not this user's to make children in, or "".
func (g *Group) delegated() string {
	euid := uint32(os.Geteuid())
	for _, name := range []string{"", "cgroup.procs"} {
		var st unix.Stat_t
		if err := unix.Fstatat(g.dir, name, &st, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return g.Path + "/" + name + ": " + err.Error()
		}
		if st.Uid != euid || st.Mode&0o200 == 0 {
			return g.Path + " is not delegated to this user (owner uid " + strconv.Itoa(int(st.Uid)) + ")"
		}
	}
	if g.Version == 1 {
		return ""
	}
	ctrls, err := g.read("cgroup.controllers")
	if err != nil {
		return err.Error()
	}
	if !hasWord(ctrls, " ", "memory") {
		return g.Path + " has no memory controller (cgroup.controllers)"
	}
	sub, err := g.read("cgroup.subtree_control")
	if err != nil {
		return err.Error()
	}
	if hasWord(sub, " ", "memory") {
		return ""
	}
	// A cgroup with processes of its own (this one) cannot enable a
	// controller for its children (EBUSY), but the root.
	if err := writeAt(g.dir, "cgroup.subtree_control", "+memory"); err != nil {
		return g.Path + ": cannot enable memory for its children: " + err.Error()
	}
	return ""
}

// Limit is the group's own memory limit, 0 where it has none.
func (g *Group) Limit() int64 {
	name := "memory.max"
	if g.Version == 1 {
		name = "memory.limit_in_bytes"
	}
	s, err := g.read(name)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 { // "max", or v1's unlimited page-rounded maximum
		return 0
	}
	return n
}

func (g *Group) read(name string) (string, error) { return readAt(g.dir, name) }

// readAt reads the cgroup file name in folder dir, without following a
// link.
func readAt(dir int, name string) (string, error) {
	fd, err := ownerfile.Open(dir, name, unix.O_RDONLY, 0)
	if err != nil {
		return "", fmt.Errorf("cgroup %s: %w", name, err)
	}
	defer unix.Close(fd)
	var b [4096]byte
	n, err := unix.Read(fd, b[:])
	if err != nil {
		return "", fmt.Errorf("cgroup %s: %w", name, err)
	}
	return string(b[:n]), nil
}

// writeAt writes v to the cgroup file name in folder dir, in one write,
// without following a link.
func writeAt(dir int, name, v string) error {
	fd, err := ownerfile.Open(dir, name, unix.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", name, err)
	}
	defer unix.Close(fd)
	n, err := unix.Write(fd, []byte(v))
	if err == nil && n != len(v) {
		err = errors.New("short write")
	}
	if err != nil {
		return fmt.Errorf("cgroup %s %s: %w", name, v, err)
	}
	return nil
}
