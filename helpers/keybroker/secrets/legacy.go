package secrets

import (
	"os"
	"path/filepath"
	"sort"
)

// Legacy is a place an older layout kept keys in.
type Legacy struct {
	Path string `json:"path"`
	What string `json:"what"`
}

// LegacyKeys names the places under home where an older Link kept an
// agent's keys and something is still there: the settings of the layout
// before agents had names (~/Link/Agent/harness.toml) and each old
// harness install's .env (~/Link/Agent/Harnesses/<harness>/.env). It
// looks with lstat alone: it never opens, reads or removes them, and a
// link there is named, never followed.
func LegacyKeys(home string) []Legacy {
	var out []Legacy
	old := filepath.Join(home, "Link", "Agent")
	if _, err := os.Lstat(filepath.Join(old, "harness.toml")); err == nil {
		out = append(out, Legacy{filepath.Join(old, "harness.toml"), "the settings of the layout before agents had names"})
	}
	var ents []os.DirEntry
	if st, err := os.Lstat(filepath.Join(old, "Harnesses")); err == nil && st.IsDir() {
		ents, _ = os.ReadDir(filepath.Join(old, "Harnesses"))
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(old, "Harnesses", e.Name(), ".env")
		if _, err := os.Lstat(p); err == nil {
			out = append(out, Legacy{p, "an old harness install's keys"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// LegacyHint is how to give a key left in an older place again.
const LegacyHint = "Link never reads or removes it; give the key again with: lnk secret create AGENT_<AGENT>_MODEL_KEY, then lnk secret add AGENT_<AGENT>_MODEL_KEY --agent <agent>"
