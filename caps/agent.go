package caps

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"
)

// ErrNoAgent is returned for an agent name with no folder.
var ErrNoAgent = errors.New("no such agent")

// Agent is Config/agent.toml: who the agent is.
type Agent struct {
	ID      string `toml:"id" json:"id"`
	Name    string `toml:"name" json:"name"`
	Owner   string `toml:"owner" json:"owner"`
	Harness string `toml:"harness,omitempty" json:"harness,omitempty"`
	Created string `toml:"created" json:"created"`

	// NoSandbox is the agent's one setting that turns its sandbox off
	// (lnk agent start --no-sandbox, until --sandbox): agent_start.go.
	NoSandbox bool `toml:"no_sandbox,omitempty" json:"no_sandbox,omitempty"`
	// Start is [start]: the program lnk agent start runs (agent_start.go).
	Start *AgentStart `toml:"start,omitempty" json:"start,omitempty"`
	// Ports is [ports]: the agent's block of localhost ports.
	Ports *PortBlock `toml:"ports,omitempty" json:"ports,omitempty"`
	// Model is [model]: Link Harness's model (agent_model.go); none is
	// Link's built-in.
	Model *AgentModel `toml:"model,omitempty" json:"model,omitempty"`
}

// layoutFor is the layout under home, with home's own links resolved (the
// owner's HOME is trusted; everything under it is not).
func layoutFor(home string) (Layout, error) {
	if home == "" || !filepath.IsAbs(home) {
		return Layout{}, fmt.Errorf("HOME %q is not an absolute path", home)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(home))
	if err != nil {
		return Layout{}, fmt.Errorf("HOME: %w", err)
	}
	return Layout{Home: real}, nil
}

// isID reports whether s is an ID as NewID makes them: 32 lowercase hex
// digits.
func isID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// NewID is a random 128-bit ID, 32 lowercase hex digits.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("caps: no randomness: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// CreateAgent makes agent name under home: ~/Link/Agents/<name>/{Home,
// Home/work, Agent, Config, Harnesses} and Agent's collections
// (Collections) (0700), Config/agent.toml and an empty Config/sandbox.toml
// (0600), and ~/.lnk/agents/<name>/logs (0700).
func CreateAgent(home, name string) (*Agent, error) {
	return createAgent(home, newAgent(name), []byte(sandboxHeader))
}

// createAgent makes agent a's folders and writes its agent.toml and
// sandbox.toml. A folder of its name already there is ErrAgentExists.
func createAgent(home string, a *Agent, sandbox []byte) (*Agent, error) {
	name := a.Name
	if err := CheckName(name); err != nil {
		return nil, err
	}
	if strings.HasPrefix(name, ".") {
		return nil, at(ErrBadName, name, "an agent's name can't start with '.': lnk agent list shows the agents")
	}
	if !isID(a.ID) {
		return nil, at(ErrAgentFile, quote(a.ID), "an agent's ID is 32 lowercase hex digits")
	}
	l, err := layoutFor(home)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{l.Link(), l.Agents()} {
		if err := mkdirPrivate(d); err != nil {
			return nil, err
		}
	}
	dir := l.AgentDir(name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, at(ErrAgentExists, name, "lnk agent list shows the agents; lnk agent delete "+name+" removes it")
		}
		return nil, err
	}
	dirs := []string{l.FilesDir(name), filepath.Join(l.FilesDir(name), "work"), l.OwnDir(name), l.ConfigDir(name), filepath.Join(dir, "Harnesses")}
	for _, c := range Collections {
		dirs = append(dirs, filepath.Join(l.OwnDir(name), c))
	}
	for _, d := range dirs {
		if err := mkdirPrivate(d); err != nil {
			return nil, err
		}
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(a); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(l.AgentFile(name), buf.Bytes()); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(l.SandboxFile(name), sandbox); err != nil {
		return nil, err
	}
	if err := makeLogsDir(l, name); err != nil {
		return nil, err
	}
	return a, nil
}

const sandboxHeader = "# What you grant this agent, whichever harness runs it (lnk agent allow|deny).\n"

// LoadAgent reads agent name's Config/agent.toml.
func LoadAgent(home, name string) (*Agent, error) {
	_, a, err := agentIn(home, name)
	return a, err
}

// agentIn is agent name under home and the layout it lies in: the name
// checked (CheckName) before anything is read.
func agentIn(home, name string) (Layout, *Agent, error) {
	if err := CheckName(name); err != nil {
		return Layout{}, nil, err
	}
	l, err := layoutFor(home)
	if err != nil {
		return Layout{}, nil, err
	}
	a, err := loadAgent(l, name)
	if err != nil {
		return Layout{}, nil, err
	}
	return l, a, nil
}

// LoadAgentAsIs is LoadAgent that never makes a missing agent.toml
// again: an agent's folder without one is ErrNoAgent. An undo of a
// receive cut short (services/move) reads so the agent it was making,
// whose folder it made before its agent.toml.
func LoadAgentAsIs(home, name string) (*Agent, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	l, err := layoutFor(home)
	if err != nil {
		return nil, err
	}
	return loadAgentAs(l, name, false)
}

func loadAgent(l Layout, name string) (*Agent, error) { return loadAgentAs(l, name, true) }

// loadAgentAs reads agent name's agent.toml; one missing is made again
// when remake, else ErrNoAgent.
func loadAgentAs(l Layout, name string, remake bool) (*Agent, error) {
	if strings.HasPrefix(name, ".") {
		// ~/Link/Agents/.<name> are Link's own (an older Link's .moved):
		// never an agent, never made into one.
		return nil, at(ErrBadName, quote(name), "an agent's name can't start with '.': lnk agent list shows the agents")
	}
	if kind, err := Resolve(l.AgentDir(name)); err != nil || kind != KindDir {
		switch {
		case errors.Is(err, ErrMissing):
			return nil, fmt.Errorf("%w: %s", ErrNoAgent, name)
		case errors.Is(err, ErrSymlink):
			return nil, at(ErrSymlink, quote(l.AgentDir(name)), "an agent's folder is never a link to another's: lnk agent list shows the agents")
		case err == nil:
			return nil, at(ErrAgentFile, quote(l.AgentDir(name)), "it is not a folder: lnk agent list shows the agents")
		}
		return nil, err
	}
	f, err := openNoLinks(l.AgentFile(name))
	if errors.Is(err, os.ErrNotExist) && !remake {
		return nil, fmt.Errorf("%w: %s (its folder has no agent.toml)", ErrNoAgent, name)
	}
	if errors.Is(err, os.ErrNotExist) {
		a, err := recreateAgentFile(l, name)
		if !errors.Is(err, unix.EEXIST) {
			return a, err
		}
		f, err = openNoLinks(l.AgentFile(name)) // made meanwhile by another lnk
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var a Agent
	md, err := toml.NewDecoder(f).Decode(&a)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", l.AgentFile(name), oneLine(err.Error()))
	}
	_ = md
	if a.Name != name || !isID(a.ID) {
		// Another agent's agent.toml copied in would make this one
		// that agent; an ID of any other form names paths (its sockets,
		// its records) it could lead out of.
		return nil, at(ErrAgentFile, fmt.Sprintf("%s (agent %q, id %q)", quote(l.AgentFile(name)), quote(a.Name), quote(a.ID)),
			"lnk agent list shows the agents; remove this agent.toml and Link makes it again, with a new ID, at the agent's next use")
	}
	return &a, nil
}

// ListAgents lists the agents under home, by name.
func ListAgents(home string) ([]Agent, error) {
	l, err := layoutFor(home)
	if err != nil {
		return nil, err
	}
	if _, err := Resolve(l.Agents()); errors.Is(err, ErrMissing) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(l.Agents())
	if err != nil {
		return nil, err
	}
	var out []Agent
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || CheckName(e.Name()) != nil {
			continue
		}
		a, err := loadAgent(l, e.Name())
		if err != nil {
			continue
		}
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// SetHarness records in agent name's Config/agent.toml the harness that
// runs it, whose layer (~/.lnk/harnesses/<harness>.toml) then joins its
// grants. "" clears it.
func SetHarness(home, name, harness string) error {
	if harness != "" {
		if err := CheckName(harness); err != nil {
			return err
		}
	}
	l, a, err := agentIn(home, name)
	if err != nil {
		return err
	}
	a.Harness = harness
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(a); err != nil {
		return err
	}
	return writeFileAtomic(l.AgentFile(name), buf.Bytes())
}
