package webhook

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/secret"
)

// bridgeFile is where lnk agent start leaves the agent's endpoint and key
// (services/harness/config on branch h-endpoint owns its format; until
// it is merged this reads the fields it needs).
const bridgeFile = "bridge.json"

// ErrNoBridge is an agent whose harness has not left its endpoint.
var ErrNoBridge = errors.New("the agent's harness has not said where its endpoint is (lnk agent start writes ~/.lnk/agents/<agent>/bridge.json)")

// HarnessOf is the Deliverer to agent a's running harness, from its
// bridge.json (600, never through a link): its endpoint on 127.0.0.1
// alone, and its key.
func HarnessOf(a Agent) (*Harness, error) {
	d, err := ownerdir.Open(a.Home, ".lnk", "agents", a.Name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	data, err := ownerfile.ReadFile(int(d.Fd()), bridgeFile, ownerfile.Private, 64<<10)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoBridge, err)
	}
	defer clear(data)
	var b struct {
		AgentID  string `json:"agent_id"`
		Owner    string `json:"owner"`
		Name     string `json:"name"`
		Endpoint string `json:"endpoint"`
		Key      string `json:"key"`
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoBridge, err)
	}
	if b.AgentID != a.ID {
		return nil, fmt.Errorf("%w: its bridge.json is another agent's", ErrNoBridge)
	}
	u, err := url.Parse(b.Endpoint)
	if err != nil || u.Scheme != "http" || u.Path != "" || u.User != nil {
		return nil, fmt.Errorf("%w: its endpoint is not http://127.0.0.1:PORT", ErrNoBridge)
	}
	host, port, err := net.SplitHostPort(u.Host)
	p, perr := strconv.Atoi(port)
	if err != nil || host != "127.0.0.1" || perr != nil || p < 1 || p > 65535 {
		return nil, fmt.Errorf("%w: its endpoint is not http://127.0.0.1:PORT", ErrNoBridge)
	}
	raw, err := hex.DecodeString(b.Key)
	if err != nil || len(raw) < 32 {
		clear(raw)
		return nil, fmt.Errorf("%w: its key is not 32 bytes or more, in hex", ErrNoBridge)
	}
	k, err := secret.New(raw)
	if err != nil {
		return nil, err
	}
	return &Harness{Port: p, AgentID: b.AgentID, Owner: b.Owner, Name: b.Name, Key: k}, nil
}
