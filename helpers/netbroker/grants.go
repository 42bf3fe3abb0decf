package netbroker

import (
	"encoding/json"
	"fmt"
)

// Grants are the network grants of one sandbox, as the proxy takes them
// from its starter: what [RulesFrom] reads, and the agent's ID that
// names its socket's folder. Nothing else of the agent's grants (its
// folders, its tools, its secrets' values) reaches the proxy. The JSON
// names are caps.Compiled's, so its conversion (kernel/sandbox's
// NetGrants) is field for field.
type Grants struct {
	// AgentID is the agent's ID (32 lowercase hex digits); "" for a run
	// with no agent.
	AgentID string `json:"agent_id,omitempty"`
	// AgentName names the agent in refusals' hints.
	AgentName string `json:"agent_name,omitempty"`
	// NetworkMode is [network] mode: "" behind the proxy; "host" has no
	// proxy, and RulesFrom refuses it.
	NetworkMode string `json:"network_mode,omitempty"`
	// Internet is [internet]: the hosts, plain TCP endpoints and rate.
	Internet InternetGrants `json:"internet"`
	// LANHosts are the local-network hosts granted ([lan] hosts).
	LANHosts []string `json:"lan_hosts,omitempty"`
	// LocalhostPorts are the loopback ports granted ([localhost] ports).
	LocalhostPorts []uint16 `json:"localhost_ports,omitempty"`
	// LocalModelPorts are the loopback ports of the agent's local model
	// (Link Harness's [model], Link's built-in among them), each also in
	// LocalhostPorts: reached for inference only ([Config.LocalModelPorts]).
	LocalModelPorts []uint16 `json:"local_model_ports,omitempty"`
	// AllLocalhost is [localhost] ports = "*", only ever with
	// NetworkMode "host": RulesFrom refuses it.
	AllLocalhost bool `json:"all_localhost,omitempty"`
}

// InternetGrants are [internet]'s grants.
type InternetGrants struct {
	// On is whether the internet is reached at all.
	On bool `json:"on"`
	// Hosts are the hosts allowed; empty with On means any host.
	Hosts []string `json:"hosts,omitempty"`
	// PerMinute caps requests and tunnels a minute (0: no cap).
	PerMinute int `json:"per_minute,omitempty"`
	// TCP are plain TCP endpoints ("host:port").
	TCP []string `json:"tcp,omitempty"`
}

// ReadGrants decodes the next JSON value of dec as [Grants], strictly:
// a field it does not know is refused, never ignored, and so is a value
// of the wrong type. It leaves dec refusing unknown fields for what
// follows. The grants come from lnk, over the proxy's stdin; what they
// say is checked by [RulesFrom] (and the agent's ID where a socket is
// made for it).
func ReadGrants(dec *json.Decoder) (*Grants, error) {
	dec.DisallowUnknownFields()
	var g Grants
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("the grants: %w", err)
	}
	return &g, nil
}
