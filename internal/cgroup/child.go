package cgroup

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// prefix begins the name of every cgroup lnk makes: then lnk's pid and a
// random part, unique to the run.
const prefix = "lnk-sandbox-"

// Child is one sandbox's cgroup, made in a Group.
type Child struct {
	Name  string
	Max   int64 // its memory limit, in bytes
	group *Group
	dir   int
}

// Make sweeps the group's stale sandbox cgroups, then makes one with a
// memory limit of max bytes (swap none beyond it).
func (g *Group) Make(max int64) (*Child, error) {
	g.Sweep()
	var r [8]byte
	rand.Read(r[:])
	name := prefix + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(r[:])
	if err := unix.Mkdirat(g.dir, name, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup: make %s/%s: %w", g.Path, name, err)
	}
	fd, err := ownerfile.Open(g.dir, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		unix.Unlinkat(g.dir, name, unix.AT_REMOVEDIR)
		return nil, fmt.Errorf("cgroup: open %s/%s: %w", g.Path, name, err)
	}
	c := &Child{Name: name, Max: max, group: g, dir: fd}
	if err := c.limit(); err != nil {
		c.Remove()
		return nil, err
	}
	return c, nil
}

// limit sets the child's memory limit, and holds swap to it: v2's
// memory.swap.max 0 (the limit is on memory alone), v1's memsw limit the
// same as memory's (memory and swap together). A kernel without swap
// accounting has no such file, and then no swap to hold.
func (c *Child) limit() error {
	v := strconv.FormatInt(c.Max, 10)
	if c.group.Version == 2 {
		if err := writeAt(c.dir, "memory.max", v); err != nil {
			return err
		}
		if err := writeAt(c.dir, "memory.swap.max", "0"); err != nil && !errors.Is(err, unix.ENOENT) {
			return err
		}
		return nil
	}
	if err := writeAt(c.dir, "memory.limit_in_bytes", v); err != nil {
		return err
	}
	if err := writeAt(c.dir, "memory.memsw.limit_in_bytes", v); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}

// FD is the child's folder, for clone3's CLONE_INTO_CGROUP (v2 only).
func (c *Child) FD() int { return c.dir }

// Enter moves process pid (all its threads) into the child.
func (c *Child) Enter(pid int) error { return writeAt(c.dir, "cgroup.procs", strconv.Itoa(pid)) }

// Leave moves process pid back into the group.
func (c *Child) Leave(pid int) error {
	return writeAt(c.group.dir, "cgroup.procs", strconv.Itoa(pid))
}

// Remove removes the child, which must be empty by then (its processes
// ended): EBUSY while one is still in it.
func (c *Child) Remove() error {
	if c == nil || c.dir < 0 {
		return nil
	}
	if err := unix.Unlinkat(c.group.dir, c.Name, unix.AT_REMOVEDIR); err != nil {
		return fmt.Errorf("cgroup: remove %s/%s: %w", c.group.Path, c.Name, err)
	}
	unix.Close(c.dir)
	c.dir = -1
	return nil
}

// Sweep removes the group's sandbox cgroups left by runs that ended
// without removing their own (one that exec'd bubblewrap, or crashed):
// those whose lnk's pid is gone. One still holding processes stays
// (rmdir refuses it).
func (g *Group) Sweep() {
	f, err := openDir(g.dir)
	if err != nil {
		return
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, prefix)
		if !ok {
			continue
		}
		ps, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(ps)
		if err != nil || pid <= 0 {
			continue
		}
		if pid != os.Getpid() && errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			unix.Unlinkat(g.dir, n, unix.AT_REMOVEDIR)
		}
	}
}

// openDir opens a second fd of folder dir to list it.
func openDir(dir int) (*os.File, error) {
	fd, err := ownerfile.OpenDir(dir, ".", unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "cgroup"), nil
}
