package caps

import (
	"sort"
	"strings"
	"time"
	"unicode"

	"lnk.dev/lnk/internal/toolname"
)

// compileNet joins [internet], [localhost], [lan], [network] and
// [browser] of every layer, each host and port checked.
func compileNet(out *Compiled, layers []*Layer) error {
	anyHost := false
	for _, ly := range layers {
		s := ly.Spec
		if in := s.Internet; in != nil {
			on := in.On == nil || *in.On
			if on {
				out.Internet.On = true
				if len(in.Hosts) == 0 {
					anyHost = true
				}
			}
			for _, h := range in.Hosts {
				ch, err := CheckHost(h)
				if err != nil {
					return err
				}
				out.Internet.Hosts = appendNew(out.Internet.Hosts, ch)
			}
			if in.PerMinute < 0 {
				return at(ErrBadLimit, "[internet] per_minute")
			}
			if in.PerMinute > 0 && (out.Internet.PerMinute == 0 || in.PerMinute < out.Internet.PerMinute) {
				out.Internet.PerMinute = in.PerMinute
			}
			for _, e := range in.TCP {
				ce, err := checkEndpoint(e)
				if err != nil {
					return err
				}
				out.Internet.TCP = appendNew(out.Internet.TCP, ce)
			}
		}
		if s.Network != nil {
			switch s.Network.Mode {
			case "":
			case "host":
				out.NetworkMode = "host"
			default:
				return at(ErrBadMode, quote(s.Network.Mode))
			}
		}
		if s.Localhost != nil {
			for _, p := range s.Localhost.Ports {
				if p == "*" {
					out.AllLocalhost = true
					continue
				}
				n, err := parsePort(string(p))
				if err != nil {
					return err
				}
				if !containsPort(out.LocalhostPorts, n) {
					out.LocalhostPorts = append(out.LocalhostPorts, n)
				}
			}
		}
		for _, hs := range []struct {
			spec *HostsSpec
			dst  *[]string
		}{{s.LAN, &out.LANHosts}, {s.Browser, &out.BrowserHosts}} {
			if hs.spec == nil {
				continue
			}
			for _, h := range hs.spec.Hosts {
				ch, err := CheckHost(h)
				if err != nil {
					return err
				}
				*hs.dst = appendNew(*hs.dst, ch)
			}
		}
	}
	if anyHost || !out.Internet.On {
		out.Internet.Hosts = nil
	}
	if out.AllLocalhost && out.NetworkMode != "host" {
		return at(ErrAllPorts, `[localhost] ports = ["*"]`, `lnk agent allow AGENT --network-mode host --port '*'`)
	}
	sort.Slice(out.LocalhostPorts, func(i, j int) bool { return out.LocalhostPorts[i] < out.LocalhostPorts[j] })
	return nil
}

func containsPort(ps []uint16, p uint16) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

// compileTools joins [tools], [teams.<team>], [model] and [commands].
func compileTools(out *Compiled, layers []*Layer) error {
	for _, ly := range layers {
		s := ly.Spec
		if s.Tools != nil {
			for name, ts := range s.Tools.Grant {
				if err := CheckToolName(name); err != nil {
					return err
				}
				if ts.Ask != "" && ts.Ask != "none" {
					return at(ErrBadAsk, quote(ts.Ask))
				}
				t := out.Tools[name]
				for _, call := range ts.Allow {
					if call == "" || strings.ContainsFunc(call, unicode.IsControl) || len(call) > 128 {
						return at(ErrBadName, quote(call))
					}
					t.Allow = appendNew(t.Allow, call)
				}
				t.AskNone = t.AskNone || ts.Ask == "none"
				out.Tools[name] = t
			}
			for _, name := range s.Tools.Strangers {
				if err := checkStranger(name); err != nil {
					return err
				}
				out.Strangers = appendNew(out.Strangers, name)
			}
		}
		for team, tg := range s.Teams {
			if err := CheckName(team); err != nil {
				return err
			}
			g := out.Teams[team]
			for _, dirs := range [][]string{tg.Read, tg.Write} {
				for _, d := range dirs {
					if d != "." {
						if err := CheckName(d); err != nil {
							return err
						}
					}
				}
			}
			for _, d := range tg.Write {
				g.Write = appendNew(g.Write, d)
			}
			for _, d := range tg.Read {
				g.Read = appendNew(g.Read, d)
			}
			for _, r := range g.Read {
				for _, w := range g.Write {
					if r == w || w == "." {
						return at(ErrReadInsideWrite, "[teams."+team+"] "+r)
					}
				}
			}
			out.Teams[team] = g
		}
		if s.Model != nil {
			for _, m := range s.Model.Allow {
				if toolname.CheckModel(m) != nil {
					return at(ErrBadModel, "[model] allow "+quote(m), "name each model of [model] allow in the agent's Config/sandbox.toml as its provider does")
				}
				out.Models = appendNew(out.Models, m)
			}
		}
		if s.Commands != nil {
			for _, cmd := range s.Commands.Allow {
				cc, err := checkCommand(cmd)
				if err != nil {
					return at(ErrBadCommand, quote(cmd))
				}
				out.Commands = appendNew(out.Commands, cc)
			}
		}
	}
	return checkStrangersKnown(out.Strangers, out.Tools)
}

// compileLimits sets the agent layer's limits over the defaults.
func compileLimits(lim *Limits, s *Spec) error {
	dur := func(name, v string, dst *time.Duration) error {
		if v == "" {
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return at(ErrBadLimit, name+" = "+quote(v))
		}
		*dst = d
		return nil
	}
	num := func(name string, v int64, dst *int64) error {
		if v < 0 {
			return at(ErrBadLimit, name)
		}
		if v > 0 {
			*dst = v
		}
		return nil
	}
	small := func(name string, v int, dst *int) error {
		var x = int64(*dst)
		if err := num(name, int64(v), &x); err != nil {
			return err
		}
		*dst = int(x)
		return nil
	}
	if s.Run != nil {
		if err := dur("[run] idle_after", s.Run.IdleAfter, &lim.IdleAfter); err != nil {
			return err
		}
	}
	if s.Tool == nil {
		return nil
	}
	var errs []error
	if r := s.Tool.Run; r != nil {
		errs = append(errs,
			dur("[tool.run] timeout", r.Timeout, &lim.Run.Timeout),
			num("[tool.run] output", r.Output, &lim.Run.Output),
			dur("[tool.run] background_timeout", r.BackgroundTimeout, &lim.Run.BackgroundTimeout),
			small("[tool.run] background", r.Background, &lim.Run.Background),
			num("[tool.run] background_output", r.BackgroundOutput, &lim.Run.BackgroundOutput),
			small("[tool.run] background_per_day", r.BackgroundPerDay, &lim.Run.BackgroundPerDay),
			dur("[tool.run] background_keep", r.BackgroundKeep, &lim.Run.BackgroundKeep))
	}
	if m := s.Tool.Memory; m != nil {
		errs = append(errs, num("[tool.memory] notes", m.Notes, &lim.Memory.Notes))
	}
	if sc := s.Tool.Scheduler; sc != nil {
		errs = append(errs,
			small("[tool.scheduler] hops", sc.Hops, &lim.Scheduler.Hops),
			small("[tool.scheduler] per_day", sc.PerDay, &lim.Scheduler.PerDay),
			small("[tool.scheduler] subagents", sc.Subagents, &lim.Scheduler.Subagents))
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
