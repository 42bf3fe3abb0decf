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
// folder), LNK_PORT when lnk's own is a port number (the agent's first
// port, which its supervisor sets), the variables in passedThrough when the
// owner has them, and with a relay HTTP_PROXY, HTTPS_PROXY, ALL_PROXY
// (and their lowercase forms); with a tool bridge, LNK_TOOL_<NAME> for
// each granted tool (addToolEnv); with a started proxy (addProxyEnv),
// ALL_PROXY and all_proxy as socks5h://lnk:<its secret>@127.0.0.1:<relay>
// instead, and for each sealed secret granted, <NAME> (its placeholder)
// and LNK_SEALED_<NAME>_URL. Nothing else — no SSH_AUTH_SOCK, no tokens,
// never a secret's value.
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
	if v := os.Getenv("LNK_PORT"); isPort(v) {
		env["LNK_PORT"] = v
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

// addProxyEnv sets what a started proxy p tells its sandbox: ALL_PROXY
// (and all_proxy) = socks5h://lnk:<secret>@127.0.0.1:<relay>, for
// programs that ignore HTTP_PROXY (HTTP_PROXY and HTTPS_PROXY stay the
// plain http proxy on the same port: the proxy tells SOCKS5 by its first
// byte); and for each sealed secret NAME, NAME = its placeholder and
// LNK_SEALED_<NAME>_URL = http://127.0.0.1:<relay>/_link/s/<secret>/sealed/<NAME>/,
// the root of its host's https service on the proxy. A sealed secret
// whose name another variable here already has (PATH, HOME, …) is not
// set: the sandbox's own variables win, and the name is returned for the
// caller to say so.
func addProxyEnv(env map[string]string, relay uint16, p *Proxy) (skipped []string) {
	if relay == 0 || p == nil || p.Secret == "" {
		return nil
	}
	base := "127.0.0.1:" + strconv.Itoa(int(relay))
	env["ALL_PROXY"] = "socks5h://lnk:" + p.Secret + "@" + base
	env["all_proxy"] = env["ALL_PROXY"]
	names := make([]string, 0, len(p.Placeholders))
	for name := range p.Placeholders {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		url := SealedURLName(name)
		if _, taken := env[name]; taken {
			skipped = append(skipped, name)
			continue
		}
		if _, taken := env[url]; taken {
			skipped = append(skipped, name)
			continue
		}
		env[name] = p.Placeholders[name]
		env[url] = "http://" + base + "/_link/s/" + p.Secret + "/sealed/" + name + "/"
	}
	return skipped
}

// ProxyEnv sets in env what a command with no sandbox is told of its
// loopback proxy p (the kernel's, for an unconfined start: p.Port), as a
// sandbox is of its own.
func ProxyEnv(env map[string]string, p *Proxy) {
	addProxyEnv(env, p.Port, p)
}

// SealedURLName is the variable naming sealed secret name's route.
func SealedURLName(name string) string { return "LNK_SEALED_" + name + "_URL" }

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

// isPort says whether v is a port number, 1 to 65535, in plain decimal.
func isPort(v string) bool {
	n, err := strconv.Atoi(v)
	return err == nil && n >= 1 && n <= 65535 && strconv.Itoa(n) == v
}
