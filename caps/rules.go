package caps

import (
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"lnk.dev/lnk/internal/toolname"
)

// checker holds what the rules compare a path against: the owner's
// layout, the agent the grant is for ("" for none) and lnk's own folder.
type checker struct {
	l      Layout
	self   string // the agent's name, or ""
	lnkDir string // the folder holding the running lnk, or ""
	// pathDirs are the absolute folders of the owner's PATH.
	pathDirs []string
	// runtimeDirs are the session's runtime folders: /run/user/<uid> and
	// $XDG_RUNTIME_DIR.
	runtimeDirs []string
}

// newChecker is the checker for layout l and agent self, with PATH and
// the runtime folders from this process's environment. It fails where
// lnk's own folder cannot be learned (lnkDir).
func newChecker(l Layout, self string) (checker, error) {
	dir, err := lnkDir()
	if err != nil {
		return checker{}, err
	}
	c := checker{l: l, self: self, lnkDir: dir}
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if filepath.IsAbs(d) {
			c.pathDirs = appendNew(c.pathDirs, filepath.Clean(d))
		}
	}
	c.runtimeDirs = []string{"/run/user/" + strconv.Itoa(os.Getuid())}
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		c.runtimeDirs = appendNew(c.runtimeDirs, filepath.Clean(d))
	}
	return c, nil
}

// checkLinkFolders refuses what every grant, read or written, keeps out:
// Link's settings, other agents' folders, harness homes, the agent's own
// folder outside its Home, ~/Link/History and ~/Link/Teams.
func (c checker) checkLinkFolders(abs string) error {
	l := c.l
	for _, d := range c.runtimeDirs {
		if within(abs, d) {
			return at(ErrSessionDir, abs)
		}
	}
	switch {
	case within(abs, l.Settings()):
		return at(ErrLinkSettings, abs)
	case within(abs, l.History()), within(abs, l.Teams()):
		return at(ErrHidden, abs)
	case abs == l.Agents():
		return at(ErrOtherAgent, abs, "grant the agent's own files folder: "+l.FilesDir(nonEmpty(c.self)))
	case within(abs, l.Agents()):
		rest := strings.TrimPrefix(abs, l.Agents()+"/")
		owner, _, _ := strings.Cut(rest, "/")
		if c.self == "" || owner != c.self {
			return at(ErrOtherAgent, abs)
		}
		if within(abs, filepath.Join(l.AgentDir(c.self), "Harnesses")) {
			return at(ErrHarnessHome, abs)
		}
		if !within(abs, l.FilesDir(c.self)) {
			return at(ErrOwnAgentDir, abs, "grant a folder of its Home: "+l.FilesDir(c.self))
		}
	}
	return nil
}

// checkRead applies the rules to a folder granted for reading.
func (c checker) checkRead(abs string) error { return c.checkLinkFolders(abs) }

// checkWrite applies the rules to a folder granted for writing: the files
// folder can't be one whose writing is a way out of the sandbox.
func (c checker) checkWrite(abs string) error {
	l, home := c.l, c.l.Home
	switch {
	case abs == home:
		return at(ErrHomeFolder, abs, "grant a folder inside it, e.g. lnk agent allow AGENT --write ~/Projects/x")
	case within(home, abs):
		return at(ErrHoldsHome, abs)
	case within(l.Settings(), abs), within(l.Agents(), abs), within(l.History(), abs), within(l.Teams(), abs):
		return at(ErrHoldsHidden, abs)
	}
	if err := c.checkLinkFolders(abs); err != nil {
		return err
	}
	if c.lnkDir != "" && (within(abs, c.lnkDir) || within(c.lnkDir, abs)) {
		return at(ErrLinkOwn, abs)
	}
	for _, d := range c.pathDirs {
		if within(abs, d) || within(d, abs) {
			return at(ErrOnPath, abs)
		}
	}
	for _, d := range c.runtimeDirs {
		if within(d, abs) && d != "/" {
			return at(ErrSessionDir, abs)
		}
	}
	if within(abs, home) {
		first, _, _ := strings.Cut(strings.TrimPrefix(abs, home+"/"), "/")
		if strings.HasPrefix(first, ".") {
			return at(ErrDotFolder, abs)
		}
		la := filepath.Join(home, "Library", "LaunchAgents")
		if within(abs, la) || within(la, abs) {
			return at(ErrLaunchAgents, abs)
		}
	}
	return nil
}

// checkNesting refuses a read-only folder inside (or equal to) a written one.
func checkNesting(read, write []string) error {
	for _, r := range read {
		for _, w := range write {
			if within(r, w) {
				return at(ErrReadInsideWrite, r, "it is written already as part of "+w+"; drop the read grant: lnk agent deny AGENT --read "+r)
			}
		}
	}
	return nil
}

// namespaceNames are Link's namespaces; no grant takes one.
var namespaceNames = map[string]bool{"task": true, "tool": true, "file": true, "agent": true}

// linkToolPrefixes are Link's own tools, each <prefix>-<agent id>.
var linkToolPrefixes = []string{"memory", "scheduler", "run", "file"}

// CheckToolName refuses a tool grant's name that isn't a name, breaks
// the rule of a tool's name, or is a namespace's or one of Link's own
// tools (any agent's).
func CheckToolName(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	// The one rule of a tool's name (internal/toolname): one Link
	// Harness would never offer is refused where it is granted.
	if why := toolname.ToolRefusal(name); why != "" {
		return at(ErrBadToolName, quote(name)+" ("+why+")", "grant the tool under a name of letters, digits, - and _ (at most 61, starting with a letter or digit, no -- or __)")
	}
	lower := strings.ToLower(name)
	if namespaceNames[lower] {
		return at(ErrNamespaceName, name)
	}
	for _, p := range linkToolPrefixes {
		if lower == p || strings.HasPrefix(lower, p+"-") {
			return at(ErrOwnTool, name)
		}
	}
	return nil
}

// checkStranger refuses a [tools] strangers entry that names the
// scheduler or run, or isn't a name.
func checkStranger(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	lower := strings.ToLower(name)
	for _, p := range []string{"scheduler", "run"} {
		if lower == p || strings.HasPrefix(lower, p+"-") {
			return at(ErrStrangerTool, name, "remove "+quote(name)+" from [tools] strangers in the agent's Config/sandbox.toml; lnk agent show AGENT --permissions shows what strangers get")
		}
	}
	return nil
}

// strangerOwnTools are Link's own tools [tools] strangers may name, by
// the name the harness offers them under.
var strangerOwnTools = []string{"file", "memory"}

// checkStrangersKnown refuses a [tools] strangers entry naming no tool
// the agent has (Link's file or memory, or a tool of tools, the joined
// [tools.grant]): a name that matched nothing would give nothing now,
// and silently the tool of that name granted later.
func checkStrangersKnown(strangers []string, tools map[string]Tool) error {
	for _, name := range strangers {
		if slices.Contains(strangerOwnTools, strings.ToLower(name)) {
			continue
		}
		if _, ok := tools[name]; ok {
			continue
		}
		return at(ErrStrangerNone, quote(name), "lnk agent allow AGENT --tool "+name+" grants it first, or remove it from [tools] strangers in the agent's Config/sandbox.toml")
	}
	return nil
}

// hostRE is compiled at first use, not at every lnk start.
var hostRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
})

// CheckHost refuses what isn't a DNS name (optionally "*." before it) or
// an IP address. Names are compared lowercase.
func CheckHost(h string) (string, error) {
	if ip, err := netip.ParseAddr(h); err == nil && ip.Zone() == "" {
		return ip.String(), nil
	}
	lh := strings.ToLower(h)
	if len(lh) > 253 || !hostRE().MatchString(lh) {
		return "", at(ErrBadHost, quote(h))
	}
	return lh, nil
}

// checkEndpoint refuses a [internet] tcp entry that isn't host:port.
func checkEndpoint(e string) (string, error) {
	host, port, ok := strings.Cut(e, ":")
	if strings.HasPrefix(e, "[") {
		i := strings.Index(e, "]:")
		if i < 0 {
			return "", at(ErrBadHost, quote(e), "write host:port")
		}
		host, port, ok = e[1:i], e[i+2:], true
	}
	if !ok {
		return "", at(ErrBadHost, quote(e), "write host:port")
	}
	h, err := CheckHost(host)
	if err != nil || strings.HasPrefix(h, "*.") {
		return "", at(ErrBadHost, quote(e), "write host:port")
	}
	p, err := parsePort(port)
	if err != nil {
		return "", err
	}
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h + ":" + strconv.Itoa(int(p)), nil
}

// parsePort reads 1-65535.
func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != s {
		return 0, at(ErrBadPort, quote(s))
	}
	return uint16(n), nil
}

// checkCommand refuses a [commands] entry that is neither "*", a bare
// program name, nor an absolute path without "..".
func checkCommand(cmd string) (string, error) {
	if cmd == "*" {
		return cmd, nil
	}
	if strings.HasPrefix(cmd, "/") {
		p, err := GrantPath("", "", cmd)
		if err != nil {
			return "", err
		}
		return p, nil
	}
	if err := CheckName(cmd); err != nil {
		return "", err
	}
	return cmd, nil
}

func nonEmpty(s string) string {
	if s == "" {
		return "AGENT"
	}
	return s
}
