package hub

import "strings"

// handedByName are the variables a hub is handed from its bridge, besides
// Link's own LNK_* (tools-and-asking.txt "What the unit is handed").
var handedByName = []string{"HOME", "PATH", "LANG", "XDG_CONFIG_HOME"}

// secretish reports whether a variable's name holds TOKEN, SECRET, KEY or
// PASS (in any case): such a variable is never handed on.
func secretish(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "SECRET", "KEY", "PASS"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return false
}

// HandedNames are the names, of those set in environ, a hub is handed.
func HandedNames(environ []string) []string {
	var names []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || secretish(k) {
			continue
		}
		handed := strings.HasPrefix(k, "LNK_")
		for _, n := range handedByName {
			handed = handed || k == n
		}
		if handed {
			names = append(names, k)
		}
	}
	return names
}

// HandedEnv is environ filtered to what a hub is handed.
func HandedEnv(environ []string) []string {
	keep := map[string]bool{}
	for _, n := range HandedNames(environ) {
		keep[n] = true
	}
	var out []string
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); keep[k] {
			out = append(out, kv)
		}
	}
	return out
}
