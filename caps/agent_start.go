package caps

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// What Config/agent.toml says of running the agent, read by lnk agent
// start (services/agentlife):
//
//	no_sandbox = true            # only lnk agent start --no-sandbox writes it
//
//	[start]                      # none: Link Harness (lnk-harness)
//	command = ["/usr/bin/prog", "--flag"]  # another harness
//	ports = 2                    # how many ports it listens on, from $LNK_PORT
//
//	[ports]                      # the agent's block, chosen at its first start
//	first = 20000
//	count = 3

// AgentStart is agent.toml's [start]: the program lnk agent start runs
// as the agent's harness, and how many ports it takes.
type AgentStart struct {
	Command []string `toml:"command,omitempty" json:"command,omitempty"`
	Ports   int      `toml:"ports,omitempty" json:"ports,omitempty"`
}

// PortBlock is agent.toml's [ports]: ports First to First+Count-1 are
// the agent's; its harness is given LNK_PORT=First.
type PortBlock struct {
	First int `toml:"first" json:"first"`
	Count int `toml:"count" json:"count"`
}

// Last is the block's last port.
func (b PortBlock) Last() int { return b.First + b.Count - 1 }

// Overlaps says whether b and o share a port.
func (b PortBlock) Overlaps(o PortBlock) bool { return b.First <= o.Last() && o.First <= b.Last() }

// Limits of [start] and [ports].
const (
	MaxHarnessPorts = 1000  // [start] ports at most
	DefaultPorts    = 200   // a block's size when [start] names no ports
	MinPort         = 1024  // a block starts above the privileged ports
	MaxPort         = 65535 // and ends at the last
	maxArgs         = 256
	maxArgLen       = 4096
)

// BlockSize is how many ports the agent's block holds: its harness's and
// one more, DefaultPorts when its harness doesn't say.
func (s *AgentStart) BlockSize() int {
	if s == nil || s.Ports == 0 {
		return DefaultPorts
	}
	return s.Ports + 1
}

// CheckStart refuses a [start], [ports] or [model] lnk agent start can't
// run: an empty program, an argument with a NUL or a newline, a count out of its
// bounds, a block outside 1024-65535.
func (a *Agent) CheckStart() error {
	file := "agent " + a.Name + "'s Config/agent.toml"
	if a.Model != nil {
		if err := a.Model.Check(); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	if a.RunsLinkHarness() {
		return a.checkPorts(file)
	}
	if a.Start.Command[0] == "" {
		return fmt.Errorf("%s: [start] command names an empty program", file)
	}
	if len(a.Start.Command) > maxArgs {
		return fmt.Errorf("%s: [start] command has more than %d arguments", file, maxArgs)
	}
	for _, arg := range a.Start.Command {
		if len(arg) > maxArgLen || strings.ContainsAny(arg, "\x00\n\r") {
			return fmt.Errorf("%s: [start] command has an argument with a NUL or newline, or longer than %d bytes", file, maxArgLen)
		}
	}
	return a.checkPorts(file)
}

// RunsLinkHarness says whether the agent's harness is Link Harness: its
// agent.toml names no [start] command.
func (a *Agent) RunsLinkHarness() bool { return a.Start == nil || len(a.Start.Command) == 0 }

// checkPorts refuses a [start] ports or [ports] out of bounds.
func (a *Agent) checkPorts(file string) error {
	if a.Start != nil && (a.Start.Ports < 0 || a.Start.Ports > MaxHarnessPorts) {
		return fmt.Errorf("%s: [start] ports = %d is not 0 to %d", file, a.Start.Ports, MaxHarnessPorts)
	}
	if p := a.Ports; p != nil && (p.Count < 1 || p.First < MinPort || p.Last() > MaxPort) {
		return fmt.Errorf("%s: [ports] first = %d, count = %d is not a block within %d-%d", file, p.First, p.Count, MinPort, MaxPort)
	}
	return nil
}

// UpdateAgent reads agent name's Config/agent.toml, lets change edit it,
// and writes it back atomically; nothing is written when change fails.
// Two updates at once are not serialised here: the caller holds its own
// lock where that matters (the port blocks').
func UpdateAgent(home, name string, change func(*Agent) error) (*Agent, error) {
	l, a, err := agentIn(home, name)
	if err != nil {
		return nil, err
	}
	if err := change(a); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(a); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(l.AgentFile(name), buf.Bytes()); err != nil {
		return nil, err
	}
	return a, nil
}
