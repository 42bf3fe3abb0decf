package sandbox

import (
	"slices"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/netbroker"
)

// NetGrants is the part of c the proxy serves: its network grants and
// the agent's ID and name, and nothing else (no folder, tool or
// secret). It is what NewProxy writes on lnk-netbroker's stdin, so the
// netbroker need not link caps.
func NetGrants(c *caps.Compiled) *netbroker.Grants {
	return &netbroker.Grants{
		AgentID:     c.AgentID,
		AgentName:   c.AgentName,
		NetworkMode: c.NetworkMode,
		Internet: netbroker.InternetGrants{
			On:        c.Internet.On,
			Hosts:     slices.Clone(c.Internet.Hosts),
			PerMinute: c.Internet.PerMinute,
			TCP:       slices.Clone(c.Internet.TCP),
		},
		LANHosts:        slices.Clone(c.LANHosts),
		LocalhostPorts:  slices.Clone(c.LocalhostPorts),
		LocalModelPorts: slices.Clone(c.LocalModelPorts),
		AllLocalhost:    c.AllLocalhost,
	}
}
