package endpoint

import (
	"errors"
	"fmt"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/services/harness/config"
)

// ErrOtherAgent is a bridge.json naming another agent than the one asked
// for (its ID, name or owner).
var ErrOtherAgent = errors.New("bridge.json names another agent")

// ClientFor is the Client of agent a's endpoint, from
// ~/.lnk/agents/<name>/bridge.json (0600, never through a link), which
// must name a itself. A missing file wraps os.ErrNotExist.
func ClientFor(home string, a *caps.Agent) (*Client, error) {
	d, err := ownerdir.Open(home, ".lnk", "agents", a.Name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	b, err := config.ReadBridge(int(d.Fd()))
	if err != nil {
		return nil, err
	}
	if b.AgentID != a.ID || b.Name != a.Name || b.Owner != a.Owner {
		return nil, fmt.Errorf("%w (%s)", ErrOtherAgent, b.AgentID)
	}
	return NewClient(b)
}
