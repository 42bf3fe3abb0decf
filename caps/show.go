package caps

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Line is one line of lnk agent show --permissions: a grant, whose layer
// holds it (agent, harness <h>, or link for Link's default) and the route
// by which it is enforced.
type Line struct {
	Grant string `json:"grant"` // e.g. "files write"
	Value string `json:"value"` // e.g. "/home/me/Projects/x"
	Whose string `json:"whose"` // "agent", "harness <h>", "link" (default)
	Route string `json:"route"` // e.g. "sandbox: bind mount + landlock"
}

// The routes a grant is enforced by.
const (
	RouteFiles    = "sandbox: bind mount + landlock"
	RouteHidden   = "sandbox: hidden (empty mount over it)"
	RouteProxy    = "proxy: netbroker"
	RouteHostNet  = "host network (no proxy)"
	RouteTools    = "tool bridge"
	RouteCommands = "sandbox: seccomp + exec list"
	// RouteRunTool is [tool.run]'s limits: the run tool ends a call's
	// or a background command's whole group at its time, keeps its
	// output to its size, and counts the background commands.
	RouteRunTool = "run tool: ends the group, cuts the output, counts"
	// RouteStrangers is [tools] strangers under Link Harness, which gives
	// a stranger's turn only those tools; another harness is not known
	// to, and shows RouteNone.
	RouteStrangers = "Link Harness: a stranger's turn"
	// RouteNone is a grant nothing enforces yet ([browser], [model],
	// [tools] strangers under another harness, the limits of tools not built yet): shown as
	// such, never as a route that would hold, and lnk agent allow
	// refuses to add it (ErrNotEnforced).
	RouteNone = "not enforced yet"
)

// Permissions compiles agent name's grants and lists them, each marked
// whose and its route. The compile's refusal, if any, is returned.
func Permissions(home, name string) ([]Line, *Compiled, error) {
	in, err := agentInput(home, name)
	if err != nil {
		return nil, nil, err
	}
	c, err := Compile(in)
	if err != nil {
		return nil, nil, err
	}
	layers := []*Layer{in.Own}
	if in.Harness != nil {
		layers = append(layers, in.Harness)
	}
	w := whoser{layers: layers, home: c.Home, base: c.FilesDir}
	if c.AgentName != "" {
		w.own = Layout{Home: c.Home}.OwnDir(c.AgentName)
	}
	var out []Line
	add := func(grant, value, whose, route string) {
		out = append(out, Line{grant, value, whose, route})
	}
	for _, f := range c.Folders {
		kind := "files read"
		if f.Access.Write {
			kind = "files write"
		}
		add(kind, f.Path, w.path(f.Path, f.Path == c.FilesDir), RouteFiles)
	}
	for i := 0; i+3 < len(c.ReadOnly); i += 4 {
		add("files read-only", filepath.Dir(c.ReadOnly[i])+"/{.git,.envrc,.vscode,.idea}", "link", RouteFiles)
	}
	for _, f := range c.NestedReadOnly {
		add("files read-only", f.Path, "agent (found by allow --write)", RouteFiles)
	}
	for _, ly := range layers {
		if ly != nil && ly.Spec != nil && ly.Spec.Files != nil {
			for _, p := range ly.Spec.Files.WriteGit {
				if abs, err := GrantPath(c.Home, c.FilesDir, p); err == nil {
					add("files write-git", abs+" (its nested repositories written too)", ly.Whose, RouteFiles)
				}
			}
		}
	}
	for _, p := range c.Hidden {
		if p == filepath.Join(c.Home, "Link", "Agents") && c.AgentName != "" {
			p += " (but its own Home)"
		}
		add("hidden", p, "link", RouteHidden)
	}
	net := RouteProxy
	if c.NetworkMode == "host" {
		net = RouteHostNet
		add("network mode", "host", w.find(func(s *Spec) bool { return s.Network != nil && s.Network.Mode == "host" }), RouteHostNet)
	}
	switch {
	case !c.Internet.On:
		add("internet", "off", w.find(func(s *Spec) bool { return s.Internet != nil }), net)
	case len(c.Internet.Hosts) == 0:
		add("internet", "any host", w.find(func(s *Spec) bool {
			return s.Internet != nil && (s.Internet.On == nil || *s.Internet.On) && len(s.Internet.Hosts) == 0
		}), net)
	}
	for _, h := range c.Internet.Hosts {
		add("internet host", h, w.find(func(s *Spec) bool { return s.Internet != nil && has(s.Internet.Hosts, h) }), net)
	}
	if c.Internet.PerMinute > 0 {
		add("internet per_minute", strconv.Itoa(c.Internet.PerMinute), w.find(func(s *Spec) bool { return s.Internet != nil && s.Internet.PerMinute > 0 }), net)
	}
	for _, e := range c.Internet.TCP {
		add("internet tcp", e, w.find(func(s *Spec) bool { return s.Internet != nil && has(s.Internet.TCP, e) }), net)
	}
	if c.AllLocalhost {
		add("localhost port", "*", w.find(func(s *Spec) bool { return s.Localhost != nil && has(s.Localhost.Ports, "*") }), net)
	}
	for _, p := range c.LocalhostPorts {
		ps := strconv.Itoa(int(p))
		add("localhost port", ps, w.find(func(s *Spec) bool { return s.Localhost != nil && has(s.Localhost.Ports, ps) }), net)
	}
	for _, h := range c.LANHosts {
		add("lan host", h, w.find(func(s *Spec) bool { return s.LAN != nil && has(s.LAN.Hosts, h) }), net)
	}
	for _, h := range c.BrowserHosts {
		add("browser host", h, w.find(func(s *Spec) bool { return s.Browser != nil && has(s.Browser.Hosts, h) }), RouteNone)
	}
	for _, name := range sortedKeys(c.Tools) {
		t := c.Tools[name]
		v := name + ": asks for every call"
		switch {
		case t.AskNone:
			v = name + ": ask none"
		case len(t.Allow) > 0:
			v = name + ": allow " + strings.Join(t.Allow, ", ")
		}
		add("tool", v, w.find(func(s *Spec) bool { _, ok := s.toolGrant(name); return ok }), RouteTools)
	}
	strangers := RouteNone
	if in.Agent != nil && in.Agent.RunsLinkHarness() {
		strangers = RouteStrangers
	}
	for _, st := range c.Strangers {
		add("strangers tool", st, "agent", strangers)
	}
	byWhose := map[string][]string{}
	var whoses []string
	for _, cmd := range c.Commands {
		who := w.find(func(s *Spec) bool { return s.Commands != nil && has(s.Commands.Allow, cmd) })
		if byWhose[who] == nil {
			whoses = append(whoses, who)
		}
		byWhose[who] = append(byWhose[who], cmd)
	}
	for _, who := range whoses {
		add("commands", strings.Join(byWhose[who], " "), who, RouteCommands)
	}
	for _, m := range c.Models {
		add("model", m, w.find(func(s *Spec) bool { return s.Model != nil && has(s.Model.Allow, m) }), RouteNone)
	}
	lim := c.Limits
	add("run limits", fmt.Sprintf("run %s, %d B out; background %d at once, %s each, %d/day, %d B out, kept %s",
		lim.Run.Timeout, lim.Run.Output, lim.Run.Background, lim.Run.BackgroundTimeout, lim.Run.BackgroundPerDay, lim.Run.BackgroundOutput, lim.Run.BackgroundKeep),
		w.find(func(s *Spec) bool { return s.Tool != nil && s.Tool.Run != nil }), RouteRunTool)
	add("limits", fmt.Sprintf("notes %d B; hops %d, %d/day", lim.Memory.Notes, lim.Scheduler.Hops, lim.Scheduler.PerDay),
		w.find(func(s *Spec) bool {
			return s.Tool != nil && (s.Tool.Memory != nil || s.Tool.Scheduler != nil) || s.Run != nil
		}), RouteNone)
	return out, c, nil
}

func (s *Spec) toolGrant(name string) (ToolSpec, bool) {
	if s.Tools == nil {
		return ToolSpec{}, false
	}
	t, ok := s.Tools.Grant[name]
	return t, ok
}

// whoser tells which layer holds a grant; "link" when none says it (a
// default).
type whoser struct {
	layers     []*Layer
	home, base string
	own        string // the agent's own folder (Agent/), or ""
}

func (w whoser) find(holds func(*Spec) bool) string {
	var who []string
	for _, l := range w.layers {
		if l != nil && l.Spec != nil && holds(l.Spec) {
			who = append(who, l.Whose)
		}
	}
	if len(who) == 0 {
		return "link"
	}
	return strings.Join(who, ", ")
}

func (w whoser) path(abs string, filesDir bool) string {
	who := w.find(func(s *Spec) bool {
		if s.Files == nil {
			return false
		}
		for _, p := range append(append([]string{}, s.Files.Read...), s.Files.Write...) {
			if x, err := GrantPath(w.home, w.base, p); err == nil && x == abs {
				return true
			}
		}
		return false
	})
	if who == "link" && filesDir {
		return "link (the agent's files folder)"
	}
	if who == "link" && w.own != "" && within(abs, w.own) {
		return "link (the agent's own folder)"
	}
	return who
}

func has[S ~string](list []S, v string) bool {
	for _, x := range list {
		if strings.EqualFold(string(x), v) {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}
