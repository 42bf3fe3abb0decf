package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"

	"lnk.dev/lnk/internal/ownerfile"
)

// BridgeFile is bridge.json, in ~/.lnk/agents/<agent>/ (0600): for the
// owner's client (lnk agent chat, send) and Link's bridge, where the
// agent's endpoint is and the key it takes.
const BridgeFile = "bridge.json"

// Bridge is bridge.json.
type Bridge struct {
	AgentID  string `json:"agent_id"`
	Owner    string `json:"owner"`
	Name     string `json:"name"`
	Endpoint string `json:"endpoint"` // http://127.0.0.1:PORT
	Key      string `json:"key"`
}

// Port is the endpoint's port, refusing an endpoint anywhere but
// 127.0.0.1.
func (b *Bridge) Port() (int, error) {
	u, err := url.Parse(b.Endpoint)
	if err != nil || u.Scheme != "http" || u.Path != "" || u.User != nil {
		return 0, fmt.Errorf("%w: bridge.json endpoint %q is not http://127.0.0.1:PORT", ErrBad, b.Endpoint)
	}
	host, port, err := net.SplitHostPort(u.Host)
	p, perr := strconv.Atoi(port)
	if err != nil || host != "127.0.0.1" || perr != nil || p < 1024 || p > 65535 {
		return 0, fmt.Errorf("%w: bridge.json endpoint %q is not http://127.0.0.1:PORT", ErrBad, b.Endpoint)
	}
	return p, nil
}

// BridgeFor is the bridge.json that goes with c.
func BridgeFor(c *Config) *Bridge {
	return &Bridge{AgentID: c.AgentID, Owner: c.Owner, Name: c.Name, Endpoint: "http://127.0.0.1:" + strconv.Itoa(c.Port), Key: c.Key}
}

// ParseBridge reads bridge.json's bytes strictly.
func ParseBridge(data []byte) (*Bridge, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var b Bridge
	if err := d.Decode(&b); err != nil {
		return nil, fmt.Errorf("%w: bridge.json: %v", ErrBad, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: bridge.json holds more than one object", ErrBad)
	}
	if !isID(b.AgentID) || b.Owner == "" || b.Name == "" || !isHex(b.Key, 2*KeySize) {
		return nil, fmt.Errorf("%w: bridge.json lacks the agent's ID, owner, name or a %d-byte key", ErrBad, KeySize)
	}
	if _, err := b.Port(); err != nil {
		return nil, err
	}
	return &b, nil
}

// ReadBridge reads bridge.json from the folder dirfd, as Read does
// config.json.
func ReadBridge(dirfd int) (*Bridge, error) {
	data, err := ownerfile.ReadFile(dirfd, BridgeFile, ownerfile.Private, 64<<10)
	if err != nil {
		return nil, err
	}
	return ParseBridge(data)
}

// WriteBridge writes b as bridge.json in dirfd, atomically, 0600.
func WriteBridge(dirfd int, b *Bridge) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	return ownerfile.WriteAtomic(dirfd, BridgeFile, append(data, '\n'), ownerfile.Write{Mode: 0o600})
}
