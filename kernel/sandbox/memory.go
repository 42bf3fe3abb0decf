package sandbox

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/cgroup"
)

// boundMemory finds where a cgroup may bound the sandbox's memory and
// says the bound: half the memory lnk itself may use (the machine's, or
// its own cgroup's limit if lower), so a sandbox that fills its bound
// leaves the owner's desktop and Link's own processes the other half.
// caps has no setting for it. Where no cgroup is delegated to this user,
// the status says none, and why: never an error.
func (s *Sandbox) boundMemory(opt Options) {
	g, why := cgroup.Delegated()
	if g == nil {
		s.Enforced.Memory = Bound{By: "none", Why: why}
		return
	}
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		g.Close()
		s.Enforced.Memory = Bound{By: "none", Why: "sysinfo: " + err.Error()}
		return
	}
	avail := int64(si.Totalram) * int64(si.Unit)
	if l := g.Limit(); l > 0 && l < avail {
		avail = l
	}
	max := avail / 2
	if opt.MemoryMax > 0 && opt.MemoryMax < max {
		max = opt.MemoryMax
	}
	max &^= int64(os.Getpagesize() - 1) // as the kernel keeps it
	s.memory = g
	s.Enforced.Memory = Bound{Max: int(max), By: g.By()}
}

// memoryCgroup makes the sandbox's cgroup with its bound, nil where no
// cgroup bounds it. A bound said that cannot be made refuses the start.
func (s *Sandbox) memoryCgroup() (*cgroup.Child, error) {
	if s.memory == nil {
		return nil, nil
	}
	c, err := s.memory.Make(int64(s.Enforced.Memory.Max))
	if err != nil {
		return nil, fmt.Errorf("sandbox: memory bound: %w", err)
	}
	return c, nil
}

// endMemory removes the sandbox's cgroup once its processes have ended:
// those of its pid namespace may still be leaving it after bubblewrap
// has, so a busy one is tried again for a while (endMemoryFor), then
// left for the next run's sweep. The waits start short and grow: the
// last of them is usually gone within a moment, and a call's answer
// waits on this.
func (s *Sandbox) endMemory(c *cgroup.Child) error {
	defer s.memory.Close()
	if c == nil {
		return nil
	}
	wait := endMemoryFirstWait
	for deadline := time.Now().Add(endMemoryFor); ; {
		err := c.Remove()
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, endMemoryMaxWait)
	}
}

// How long endMemory tries a busy cgroup again, and the first and
// longest of its waits.
const (
	endMemoryFor       = time.Second
	endMemoryFirstWait = 250 * time.Microsecond
	endMemoryMaxWait   = 10 * time.Millisecond
)

// enterMemory moves lnk itself into c before bubblewrap starts, where
// the child cannot be started inside it (v1, or the exec): what bubblewrap
// starts is then in it from its first instruction.
func enterMemory(c *cgroup.Child) error {
	if c == nil {
		return nil
	}
	if err := c.Enter(os.Getpid()); err != nil {
		return fmt.Errorf("sandbox: memory bound: %w", err)
	}
	return nil
}
