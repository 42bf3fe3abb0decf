package agentlife

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
)

// MainAgent is the agent that gets no block of ports of its own.
const MainAgent = "main"

// PortBase is where the blocks begin: the first block is 20000 up.
const PortBase = 20000

const portsLock = ".ports.lock"

// EnsurePorts gives agent name its block of ports, recorded in its
// agent.toml as [ports], and returns it (nil for main). A block is kept
// while it is the right size and no other agent's overlaps it; otherwise
// the lowest free one from PortBase is chosen. Blocks are chosen under
// ~/.lnk/agents/.ports.lock, so two starts never take the same ports.
func EnsurePorts(home, name string) (*caps.PortBlock, error) {
	if name == MainAgent {
		return nil, nil
	}
	d, err := agentsDir(home)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	lock, err := takeLockWait(int(d.Fd()), portsLock)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	a, err := caps.LoadAgent(home, name)
	if err != nil {
		return nil, err
	}
	all, err := caps.ListAgents(home)
	if err != nil {
		return nil, err
	}
	var others []caps.PortBlock
	for _, o := range all {
		if o.ID != a.ID && o.Ports != nil {
			others = append(others, *o.Ports)
		}
	}
	need := a.Start.BlockSize()
	if a.Ports != nil && a.Ports.Count == need && a.Ports.First >= caps.MinPort && a.Ports.Last() <= caps.MaxPort && !overlapsAny(*a.Ports, others) {
		return a.Ports, nil
	}
	b, err := freeBlock(need, others)
	if err != nil {
		return nil, err
	}
	if _, err := caps.UpdateAgent(home, name, func(a *caps.Agent) error { a.Ports = &b; return nil }); err != nil {
		return nil, err
	}
	return &b, nil
}

func overlapsAny(b caps.PortBlock, others []caps.PortBlock) bool {
	for _, o := range others {
		if b.Overlaps(o) {
			return true
		}
	}
	return false
}

// freeBlock is the lowest block of need ports from PortBase that
// overlaps none of others.
func freeBlock(need int, others []caps.PortBlock) (caps.PortBlock, error) {
	b := caps.PortBlock{First: PortBase, Count: need}
	for b.Last() <= caps.MaxPort {
		moved := false
		for _, o := range others {
			if b.Overlaps(o) {
				b.First = o.Last() + 1
				moved = true
			}
		}
		if !moved {
			return b, nil
		}
	}
	return caps.PortBlock{}, fmt.Errorf("no block of %d free ports is left between %d and %d", need, PortBase, caps.MaxPort)
}

// PortTakenError refuses a start while another program listens on one
// of the agent's ports on this machine's loopback: it would be taken for
// part of the agent.
type PortTakenError struct {
	Agent string
	Port  int
	Block caps.PortBlock
}

func (e *PortTakenError) Error() string {
	return fmt.Sprintf("another program listens on port %d on this machine's loopback, one of agent %s's ports (%d-%d): it would be taken for part of the agent",
		e.Port, e.Agent, e.Block.First, e.Block.Last())
}

// Hint names what frees it.
func (e *PortTakenError) Hint() string {
	return fmt.Sprintf("stop the program listening on port %d (ss -ltnp shows it; lnk agent status shows which agent has which ports), then lnk agent start %s", e.Port, e.Agent)
}

// CheckPortsFree refuses b while anything listens on one of its ports
// on loopback (or on every address) in this network namespace.
func CheckPortsFree(agent string, b *caps.PortBlock) error {
	if b == nil {
		return nil
	}
	ports, err := listeningOnLoopback()
	if err != nil {
		return fmt.Errorf("reading what listens on this machine, to check agent %s's ports: %w", agent, err)
	}
	for p := b.First; p <= b.Last(); p++ {
		if ports[p] {
			return &PortTakenError{Agent: agent, Port: p, Block: *b}
		}
	}
	return nil
}

// takeLockWait is takeLock, waiting for the lock.
func takeLockWait(dirfd int, name string) (*os.File, error) {
	f, err := openLockFile(dirfd, name)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	return f, nil
}
