package caps

import "strings"

// Grants are a spec's flags, as lnk agent allow|deny and lnk sandbox run
// take them. Each list adds (allow) or removes (deny) its entries.
type Grants struct {
	Read          []string // --read
	Write         []string // --write (its nested repositories kept read-only)
	WriteGit      []string // --write-git: written, nested repositories too
	Internet      *bool    // --internet as given (nil: not given); allow turns [internet] on, deny off
	InternetHosts []string // --internet-host
	TCP           []string // --tcp host:port
	NetworkMode   string   // --network-mode host
	LANHosts      []string // --lan-host
	Ports         []string // --port N or '*'
	BrowserHosts  []string // --browser-host
	Tool          string   // --tool NAME
	ToolAllow     []string // --allow CALL (with --tool)
	ToolAskNone   bool     // --ask none (with --tool)
	Commands      []string // --command
	Models        []string // --model
}

// Empty reports whether g grants nothing.
func (g Grants) Empty() bool {
	return len(g.Read)+len(g.Write)+len(g.WriteGit)+len(g.InternetHosts)+len(g.TCP)+len(g.LANHosts)+
		len(g.Ports)+len(g.BrowserHosts)+len(g.Commands)+len(g.Models) == 0 &&
		g.Internet == nil && g.NetworkMode == "" && g.Tool == ""
}

// AddTo adds g to s (lnk agent allow). A path written from a read grant
// to a write grant moves: a folder is read or written, never both.
func (g Grants) AddTo(s *Spec) error {
	if len(g.ToolAllow) > 0 || g.ToolAskNone {
		if g.Tool == "" {
			return at(ErrBadName, "--allow/--ask", "name the tool: --tool NAME --allow CALL")
		}
	}
	if len(g.Read)+len(g.Write)+len(g.WriteGit) > 0 {
		if s.Files == nil {
			s.Files = &FilesSpec{}
		}
		for _, p := range g.Write {
			s.Files.Write = addStr(s.Files.Write, p)
			s.Files.Read = removeStr(s.Files.Read, p)
			s.Files.WriteGit = removeStr(s.Files.WriteGit, p)
		}
		for _, p := range g.WriteGit {
			s.Files.Write = addStr(s.Files.Write, p)
			s.Files.Read = removeStr(s.Files.Read, p)
			s.Files.WriteGit = addStr(s.Files.WriteGit, p)
		}
		for _, p := range g.Read {
			s.Files.Read = addStr(s.Files.Read, p)
		}
	}
	if g.Internet != nil || len(g.InternetHosts)+len(g.TCP) > 0 {
		if s.Internet == nil {
			s.Internet = &InternetSpec{}
		}
		if g.Internet != nil {
			v := *g.Internet
			s.Internet.On = &v
		}
		for _, h := range g.InternetHosts {
			s.Internet.Hosts = addStr(s.Internet.Hosts, strings.ToLower(h))
		}
		for _, e := range g.TCP {
			s.Internet.TCP = addStr(s.Internet.TCP, e)
		}
	}
	if g.NetworkMode != "" {
		s.Network = &NetworkSpec{Mode: g.NetworkMode}
	}
	if len(g.Ports) > 0 {
		if s.Localhost == nil {
			s.Localhost = &LocalhostSpec{}
		}
		for _, p := range g.Ports {
			s.Localhost.Ports = addStr(s.Localhost.Ports, Port(p))
		}
	}
	addHosts(&s.LAN, g.LANHosts)
	addHosts(&s.Browser, g.BrowserHosts)
	if g.Tool != "" {
		if s.Tools == nil {
			s.Tools = &ToolsSpec{}
		}
		if s.Tools.Grant == nil {
			s.Tools.Grant = map[string]ToolSpec{}
		}
		t := s.Tools.Grant[g.Tool]
		for _, c := range g.ToolAllow {
			t.Allow = addStr(t.Allow, c)
		}
		if g.ToolAskNone {
			t.Ask = "none"
		}
		s.Tools.Grant[g.Tool] = t
	}
	if len(g.Commands) > 0 {
		if s.Commands == nil {
			s.Commands = &CommandsSpec{Allow: append([]string(nil), DefaultCommands...)}
		}
		for _, c := range g.Commands {
			s.Commands.Allow = addStr(s.Commands.Allow, c)
		}
	}
	if len(g.Models) > 0 {
		if s.Model == nil {
			s.Model = &ModelSpec{}
		}
		for _, m := range g.Models {
			s.Model.Allow = addStr(s.Model.Allow, m)
		}
	}
	return nil
}

func addHosts(dst **HostsSpec, hosts []string) {
	if len(hosts) == 0 {
		return
	}
	if *dst == nil {
		*dst = &HostsSpec{}
	}
	for _, h := range hosts {
		(*dst).Hosts = addStr((*dst).Hosts, strings.ToLower(h))
	}
}

func addStr[S ~string](list []S, v S) []S {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

func removeStr[S ~string](list []S, v S) []S {
	var out []S
	for _, x := range list {
		if x != v {
			out = append(out, x)
		}
	}
	if out == nil && list != nil {
		return []S{}
	}
	return out
}

// RemoveFrom takes g out of s (lnk agent deny). --internet turns
// [internet] off (Deny refuses --internet=false before this); --tool
// without --allow or --ask removes the tool.
func (g Grants) RemoveFrom(s *Spec) {
	if s.Files != nil {
		for _, p := range g.Read {
			s.Files.Read = removeStr(s.Files.Read, p)
		}
		for _, p := range append(append([]string(nil), g.Write...), g.WriteGit...) {
			s.Files.Write = removeStr(s.Files.Write, p)
			s.Files.WriteGit = removeStr(s.Files.WriteGit, p)
		}
	}
	if g.Internet != nil {
		if s.Internet == nil {
			s.Internet = &InternetSpec{}
		}
		off := false
		s.Internet.On = &off
	}
	if s.Internet != nil {
		for _, h := range g.InternetHosts {
			s.Internet.Hosts = removeStr(s.Internet.Hosts, strings.ToLower(h))
		}
		for _, e := range g.TCP {
			s.Internet.TCP = removeStr(s.Internet.TCP, e)
		}
	}
	if g.NetworkMode != "" && s.Network != nil && s.Network.Mode == g.NetworkMode {
		s.Network = nil
	}
	if s.Localhost != nil {
		for _, p := range g.Ports {
			s.Localhost.Ports = removeStr(s.Localhost.Ports, Port(p))
		}
	}
	for _, hs := range []struct {
		spec  *HostsSpec
		hosts []string
	}{{s.LAN, g.LANHosts}, {s.Browser, g.BrowserHosts}} {
		if hs.spec != nil {
			for _, h := range hs.hosts {
				hs.spec.Hosts = removeStr(hs.spec.Hosts, strings.ToLower(h))
			}
		}
	}
	if g.Tool != "" && s.Tools != nil && s.Tools.Grant != nil {
		t, ok := s.Tools.Grant[g.Tool]
		switch {
		case !ok:
		case len(g.ToolAllow) == 0 && !g.ToolAskNone:
			delete(s.Tools.Grant, g.Tool)
		default:
			for _, c := range g.ToolAllow {
				t.Allow = removeStr(t.Allow, c)
			}
			if g.ToolAskNone {
				t.Ask = ""
			}
			s.Tools.Grant[g.Tool] = t
		}
	}
	if len(g.Commands) > 0 {
		if s.Commands == nil {
			s.Commands = &CommandsSpec{Allow: append([]string(nil), DefaultCommands...)}
		}
		for _, c := range g.Commands {
			s.Commands.Allow = removeStr(s.Commands.Allow, c)
		}
	}
	if s.Model != nil {
		for _, m := range g.Models {
			s.Model.Allow = removeStr(s.Model.Allow, m)
		}
	}
}
