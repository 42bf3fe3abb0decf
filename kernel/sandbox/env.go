package sandbox

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"lnk.dev/lnk/caps"
)

// Path is the sandbox's PATH.
const Path = "/usr/local/bin:/usr/bin:/bin"

// passedThrough are the only variables taken from the owner's
// environment: how to draw and which language, nothing that grants.
var passedThrough = []string{"TERM", "COLORTERM", "NO_COLOR", "LANG", "LC_ALL", "LC_CTYPE", "TZ"}

// Env is the command's whole environment: PATH, HOME, USER, LOGNAME,
// SHELL, TMPDIR, LNK_SANDBOX=1, PWD (bubblewrap sets it to the working
// folder), the variables in passedThrough when the
// owner has them, and with a relay HTTP_PROXY, HTTPS_PROXY, ALL_PROXY
// (and their lowercase forms); with a tool bridge, LNK_TOOL_<NAME> for
// each granted tool (addToolEnv). Nothing else — no SSH_AUTH_SOCK, no tokens.
func Env(home string, relayPort uint16) map[string]string {
	env := map[string]string{
		"PATH":        Path,
		"HOME":        home,
		"SHELL":       "/bin/sh",
		"TMPDIR":      "/tmp",
		"LNK_SANDBOX": "1",
	}
	env["PWD"] = home // bubblewrap sets it to --chdir; named so the list is whole
	if u := os.Getenv("USER"); u != "" && safeValue(u) {
		env["USER"], env["LOGNAME"] = u, u
	}
	for _, k := range passedThrough {
		if v, ok := os.LookupEnv(k); ok && safeValue(v) {
			env[k] = v
		}
	}
	if relayPort != 0 {
		url := "http://127.0.0.1:" + strconv.Itoa(int(relayPort))
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
			env[k] = url
		}
	}
	return env
}

// addToolEnv sets LNK_TOOL_<NAME> = http://127.0.0.1:<relay><route><name>
// for each granted tool: its name upper-cased, '-' and '.' as '_'. The
// route holds the bridge's secret; it is set only with a relay and a route.
// Two names spelling one variable (a-b, a_b) give it to the first in
// sorted order, never to whichever a map walk meets last.
func addToolEnv(env map[string]string, relay uint16, route string, tools map[string]caps.Tool) {
	if relay == 0 || route == "" {
		return
	}
	names := make([]string, 0, len(tools))
	for name := range tools {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, taken := env[ToolEnvName(name)]; !taken {
			env[ToolEnvName(name)] = "http://127.0.0.1:" + strconv.Itoa(int(relay)) + route + name
		}
	}
}

// ToolEnvName is the variable naming tool name's URL in a sandbox.
func ToolEnvName(name string) string {
	return "LNK_TOOL_" + strings.Map(func(r rune) rune {
		if r == '-' || r == '.' {
			return '_'
		}
		return unicode.ToUpper(r)
	}, name)
}

// safeValue refuses control characters and absurd lengths.
func safeValue(v string) bool {
	if len(v) > 256 {
		return false
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// envArgs is env as bubblewrap arguments, sorted for a stable plan.
func envArgs(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := []string{"--clearenv"}
	for _, k := range keys {
		args = append(args, "--setenv", k, env[k])
	}
	return args
}
