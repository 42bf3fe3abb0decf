package tools

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
)

// Tool is one tool the harness may call.
type Tool struct {
	Name string // as granted ("run-3f2a…", "github"): what _meta link.local/tools names
	URL  string // its $LNK_TOOL_<NAME>: the proxy's tool route
}

// linkOwn are Link's own tools, each <prefix>-<agent id>, offered under
// the prefix alone.
var linkOwn = []string{"run", "file", "memory", "scheduler"}

// FromConfig is the tools config.json names (tool name → the variable
// holding its URL), read from getenv, in the order they are offered:
// Link's own first, then the others by name. A tool whose variable is
// empty is left out (logged).
func FromConfig(names map[string]string, getenv func(string) string, logf func(string, ...any)) []Tool {
	var out []Tool
	for name, v := range names {
		u := getenv(v)
		if u == "" {
			logf("tools: %s left out: $%s is not set", name, v)
			continue
		}
		out = append(out, Tool{Name: name, URL: u})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// shortName is the name a tool is offered under: Link's own of this
// agent (<prefix>-<agent id>) under their prefix, own true; any other as
// granted.
func shortName(name, agentID string) (short string, own bool) {
	if agentID == "" {
		return name, false
	}
	for _, p := range linkOwn {
		if name == p+"-"+agentID {
			return p, true
		}
	}
	return name, false
}

// checkURL refuses a tool URL that isn't http:// on loopback: the proxy's
// tool route is always there, and a tool is never called anywhere else.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("not a URL")
	}
	if u.Scheme != "http" || u.User != nil || u.Fragment != "" {
		return fmt.Errorf("not an http:// URL without credentials or fragment")
	}
	host := u.Hostname()
	if host != "localhost" {
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("its host %q is not this machine's loopback (the proxy's tool route is)", host)
		}
	}
	if !strings.HasPrefix(u.Path, "/") {
		return fmt.Errorf("no path")
	}
	return nil
}
