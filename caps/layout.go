package caps

import (
	"path/filepath"
)

// Layout is where Link keeps things under one owner's HOME (security.txt,
// "Where Link keeps an agent's things").
type Layout struct{ Home string }

// Settings is ~/.lnk, Link's settings: never granted, always hidden.
func (l Layout) Settings() string { return filepath.Join(l.Home, ".lnk") }

// RcloneHome is the folder, in ~/.lnk/agents/<agent id>, that an
// agent's rclone children (services/bucket) get as their HOME: it holds
// no key, and goes when the agent is deleted.
const RcloneHome = "rclone"

// Link is ~/Link.
func (l Layout) Link() string { return filepath.Join(l.Home, "Link") }

// Agents is ~/Link/Agents.
func (l Layout) Agents() string { return filepath.Join(l.Home, "Link", "Agents") }

// History is ~/Link/History.
func (l Layout) History() string { return filepath.Join(l.Home, "Link", "History") }

// Teams is ~/Link/Teams.
func (l Layout) Teams() string { return filepath.Join(l.Home, "Link", "Teams") }

// AgentDir is ~/Link/Agents/<name>.
func (l Layout) AgentDir(name string) string { return filepath.Join(l.Agents(), name) }

// FilesDir is ~/Link/Agents/<name>/Home, the agent's files folder.
func (l Layout) FilesDir(name string) string { return filepath.Join(l.AgentDir(name), "Home") }

// ConfigDir is ~/Link/Agents/<name>/Config.
func (l Layout) ConfigDir(name string) string { return filepath.Join(l.AgentDir(name), "Config") }

// SandboxFile is the agent's layer, Config/sandbox.toml.
func (l Layout) SandboxFile(name string) string {
	return filepath.Join(l.ConfigDir(name), "sandbox.toml")
}

// AgentFile is Config/agent.toml.
func (l Layout) AgentFile(name string) string {
	return filepath.Join(l.ConfigDir(name), "agent.toml")
}

// HarnessFile is a harness's layer, ~/.lnk/harnesses/<harness>.toml.
func (l Layout) HarnessFile(harness string) string {
	return filepath.Join(l.Settings(), "harnesses", harness+".toml")
}

// HistoryAgents is ~/Link/History/Agents, where a deleted agent's folders go.
func (l Layout) HistoryAgents() string { return filepath.Join(l.History(), "Agents") }

// nameOK says whether name is 1 to 64 of letters, digits, '_', '.' and
// '-' (a loop, not a regexp: it runs at every sandbox start).
func nameOK(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// CheckName refuses a name (an agent's, a harness's, a tool's, a team's)
// that isn't letters, digits, '-', '_' and '.', or is "." or "..".
func CheckName(name string) error {
	if !nameOK(name) || name == "." || name == ".." {
		if name == "" {
			return at(ErrBadName, `""`)
		}
		return at(ErrBadName, quote(name))
	}
	return nil
}

// quote shows a name or path safely on one line.
func quote(s string) string {
	q := []rune{}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			q = append(q, '?')
			continue
		}
		q = append(q, r)
	}
	return string(q)
}
