package initstage

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
)

// MaxPlan is the largest plan read: a plan is a few KiB.
const MaxPlan = 1 << 20

// Plan is what lnk-init enforces before it execs the command.
type Plan struct {
	// Path is the program exec'd, an absolute path inside the sandbox;
	// Argv its arguments, Argv[0] as the owner typed it.
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	// Paths are the landlock rules: each path inside the sandbox and what
	// may be done beneath it.
	Paths []PathRule `json:"paths"`
	// ConnectTCP are the TCP ports the command may connect to (the relay's
	// and the granted localhost ports); BindTCP those it may bind.
	ConnectTCP []uint16 `json:"connect_tcp,omitempty"`
	BindTCP    []uint16 `json:"bind_tcp,omitempty"`
	// AnyTCP leaves TCP unrestricted ([network] mode "host").
	AnyTCP bool `json:"any_tcp,omitempty"`
	// Relay, when set, forwards 127.0.0.1:Port to the unix socket Socket.
	Relay *Relay `json:"relay,omitempty"`
	// Degraded lets the command run where landlock or seccomp is missing.
	Degraded bool `json:"degraded,omitempty"`
}

// PathRule grants rights beneath one path inside the sandbox.
type PathRule struct {
	Path     string `json:"path"`
	Read     bool   `json:"read,omitempty"`
	Write    bool   `json:"write,omitempty"`
	Exec     bool   `json:"exec,omitempty"`
	Optional bool   `json:"optional,omitempty"` // skipped when absent
}

// Relay is the proxy relay's listener port and the proxy's socket path.
type Relay struct {
	Port   uint16 `json:"port"`
	Socket string `json:"socket"`
}

// ErrBadPlan is a plan that does not parse or breaks a plan rule.
var ErrBadPlan = errors.New("bad sandbox plan")

// ParsePlan decodes and checks a plan.
func ParsePlan(b []byte) (*Plan, error) {
	if len(b) > MaxPlan {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrBadPlan, len(b), MaxPlan)
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadPlan, err)
	}
	if p.Path == "" && len(p.Argv) > 0 {
		p.Path = p.Argv[0]
	}
	if len(p.Argv) == 0 || !filepath.IsAbs(p.Path) {
		return nil, fmt.Errorf("%w: the command must be an absolute path", ErrBadPlan)
	}
	for _, r := range p.Paths {
		if !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path {
			return nil, fmt.Errorf("%w: path %q is not absolute and clean", ErrBadPlan, r.Path)
		}
		if !r.Read && !r.Write && !r.Exec {
			return nil, fmt.Errorf("%w: path %q grants nothing", ErrBadPlan, r.Path)
		}
	}
	if p.Relay != nil && (p.Relay.Port == 0 || !filepath.IsAbs(p.Relay.Socket)) {
		return nil, fmt.Errorf("%w: the relay needs a port and an absolute socket path", ErrBadPlan)
	}
	return &p, nil
}

// Encode is the plan as lnk-init reads it.
func (p *Plan) Encode() ([]byte, error) { return json.Marshal(p) }
