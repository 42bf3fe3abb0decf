package kernel

import (
	"path/filepath"
	"slices"
)

// holdsOnlyHidden reports whether p strictly holds ~/.lnk or
// ~/Link/Agents (or both), lies inside neither, and each it holds is
// in hidden: the folders the agent's sandbox covers with an empty mount
// (caps.Compiled.Hidden, from the kernel's own compile). Such a folder
// (--read '~') is bound into that sandbox, and served by nothing else.
func (k *Kernel) holdsOnlyHidden(p string, hidden []string) bool {
	if hidden == nil {
		return false
	}
	home := k.opts.Home
	roots := []string{filepath.Join(home, ".lnk"), filepath.Join(home, "Link", "Agents")}
	holds := false
	for _, r := range roots {
		switch {
		case within(p, r): // r itself, or inside it
			return false
		case within(r, p):
			if !slices.Contains(hidden, r) {
				return false
			}
			holds = true
		}
	}
	return holds && !within(p, filepath.Join(home, "Link", "History"))
}
