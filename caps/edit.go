package caps

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// Allow adds g to agent name's own layer (Config/sandbox.toml), after
// compiling the result with every rule: a refusal writes nothing. It
// returns the compiled grants as they now are.
func Allow(home, name string, g Grants) (*Compiled, error) {
	unlock, err := lockConfig(home, name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := notEnforced(g); err != nil {
		return nil, err
	}
	in, err := agentInput(home, name)
	if err != nil {
		return nil, err
	}
	own := in.Own.Spec
	materializeFiles(own, g)
	if err := g.AddTo(own); err != nil {
		return nil, err
	}
	if len(g.Write)+len(g.WriteGit) > 0 {
		// What was found in these folders before goes (a stale entry,
		// now a link, would refuse the compile that rescans it); every
		// rule first, so that a folder that may not be written is never
		// scanned.
		base := Layout{Home: in.Home}.FilesDir(name)
		for _, p := range append(append([]string(nil), g.Write...), g.WriteGit...) {
			if abs, err := GrantPath(in.Home, base, p); err == nil {
				dropNested(in.Home, base, own, abs)
			}
		}
		if _, err := Compile(in); err != nil {
			return nil, err
		}
		if err := rescanNested(in.Home, base, own, g); err != nil {
			return nil, err
		}
	}
	return compileAndSave(in)
}

// notEnforced refuses a grant that no route enforces yet: [browser]
// hosts (no page is opened for the agent) and [model] (no model route).
// Deny still takes them out of a file that has them.
func notEnforced(g Grants) error {
	switch {
	case len(g.BrowserHosts) > 0:
		return at(ErrNotEnforced, "--browser-host "+quote(g.BrowserHosts[0]), "no browser route exists yet: lnk agent show AGENT --permissions shows what is enforced")
	case len(g.Models) > 0:
		return at(ErrNotEnforced, "--model "+quote(g.Models[0]), "no model route exists yet: lnk agent show AGENT --permissions shows what is enforced")
	}
	return nil
}

// Deny removes g from agent name's own layer. A deny that the harness's
// layer still grants fails with ErrHeldByHarness naming the harness's
// file, and writes nothing.
func Deny(home, name string, g Grants) (*Compiled, error) {
	unlock, err := lockConfig(home, name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if g.Internet != nil && !*g.Internet {
		return nil, at(ErrDenyInternet, "--internet=false", "lnk agent allow AGENT --internet turns the internet on")
	}
	in, err := agentInput(home, name)
	if err != nil {
		return nil, err
	}
	if in.Harness != nil {
		if held := heldBy(in, g); held != "" {
			// No lnk command changes a harness's layer: the hint names
			// its file, where the grant is taken back.
			return nil, at(ErrHeldByHarness, held+" (in "+in.Harness.File+")",
				"the harness "+strings.TrimPrefix(in.Harness.Whose, "harness ")+" grants it: take it out of "+in.Harness.File+", its grants for every agent it runs")
		}
	}
	materializeFiles(in.Own.Spec, g)
	g.RemoveFrom(in.Own.Spec)
	base := Layout{Home: in.Home}.FilesDir(name)
	for _, p := range append(append([]string(nil), g.Write...), g.WriteGit...) {
		if abs, err := GrantPath(in.Home, base, p); err == nil {
			dropNested(in.Home, base, in.Own.Spec, abs)
		}
	}
	return compileAndSave(in)
}

// rescanNested records in s's [files] read_only what ScanNested finds
// below each folder of g.Write, in place of what was recorded there
// before; below g.WriteGit's it records nothing.
func rescanNested(home, base string, s *Spec, g Grants) error {
	for _, p := range g.WriteGit {
		abs, err := GrantPath(home, base, p)
		if err != nil {
			return err
		}
		dropNested(home, base, s, abs)
	}
	for _, p := range g.Write {
		abs, err := GrantPath(home, base, p)
		if err != nil {
			return err
		}
		found, err := ScanNested(abs)
		if err != nil {
			return err
		}
		dropNested(home, base, s, abs)
		for _, f := range found {
			s.Files.ReadOnly = addStr(s.Files.ReadOnly, f)
		}
	}
	return nil
}

// dropNested takes out of s's [files] read_only every path below dir.
func dropNested(home, base string, s *Spec, dir string) {
	if s.Files == nil {
		return
	}
	var keep []string
	for _, r := range s.Files.ReadOnly {
		if abs, err := GrantPath(home, base, r); err == nil && within(abs, dir) {
			continue
		}
		keep = append(keep, r)
	}
	s.Files.ReadOnly = keep
}

// materializeFiles writes an agent's default [files] write (work/ in its
// Home) into its spec before a change of [files], so that adding a folder
// keeps it and denying it takes it away for good.
func materializeFiles(own *Spec, g Grants) {
	if len(g.Read)+len(g.Write)+len(g.WriteGit) == 0 {
		return
	}
	if own.Files == nil {
		own.Files = &FilesSpec{}
	}
	if own.Files.Write == nil {
		own.Files.Write = []string{"work"}
	}
}

// compileAndSave compiles in and, only when every rule held, writes the
// agent's own layer atomically.
func compileAndSave(in Input) (*Compiled, error) {
	c, err := Compile(in)
	if err != nil {
		return nil, err
	}
	data, err := EncodeSpec(in.Own.Spec)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(in.Own.File, data); err != nil {
		return nil, err
	}
	return c, nil
}

// EncodeSpec writes s as TOML, with the agent file's header line.
func EncodeSpec(s *Spec) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(sandboxHeader)
	if err := toml.NewEncoder(&buf).Encode(s); err != nil {
		return nil, fmt.Errorf("encoding the spec: %w", err)
	}
	return buf.Bytes(), nil
}

// heldBy names the first entry of g that the harness's layer grants.
func heldBy(in Input, g Grants) string {
	h := in.Harness.Spec
	base := ""
	if in.Agent != nil {
		base = Layout{Home: in.Home}.FilesDir(in.Agent.Name)
	}
	samePath := func(a, b string) bool {
		x, err1 := GrantPath(in.Home, base, a)
		y, err2 := GrantPath(in.Home, base, b)
		return a == b || (err1 == nil && err2 == nil && x == y)
	}
	find := func(want []string, have []string, same func(a, b string) bool, flag string) string {
		for _, w := range want {
			for _, x := range have {
				if same(w, x) {
					return flag + " " + w
				}
			}
		}
		return ""
	}
	eqFold := strings.EqualFold
	var files FilesSpec
	if h.Files != nil {
		files = *h.Files
	}
	var inet InternetSpec
	if h.Internet != nil {
		inet = *h.Internet
	}
	var lan, browser, ports, cmds []string
	if h.LAN != nil {
		lan = h.LAN.Hosts
	}
	if h.Browser != nil {
		browser = h.Browser.Hosts
	}
	if h.Localhost != nil {
		for _, p := range h.Localhost.Ports {
			ports = append(ports, string(p))
		}
	}
	if h.Commands != nil {
		cmds = h.Commands.Allow
	}
	for _, s := range []string{
		find(g.Read, append(files.Read, files.Write...), samePath, "--read"),
		find(g.Write, files.Write, samePath, "--write"),
		find(g.InternetHosts, inet.Hosts, eqFold, "--internet-host"),
		find(g.TCP, inet.TCP, eqFold, "--tcp"),
		find(g.LANHosts, lan, eqFold, "--lan-host"),
		find(g.BrowserHosts, browser, eqFold, "--browser-host"),
		find(g.Ports, ports, eqFold, "--port"),
		find(g.Commands, cmds, eqFold, "--command"),
	} {
		if s != "" {
			return s
		}
	}
	if g.NetworkMode != "" && h.Network != nil && h.Network.Mode == g.NetworkMode {
		return "--network-mode " + g.NetworkMode
	}
	if g.Internet != nil && *g.Internet && h.Internet != nil && (h.Internet.On == nil || *h.Internet.On) {
		return "--internet"
	}
	if g.Tool != "" && h.Tools != nil {
		if t, ok := h.Tools.Grant[g.Tool]; ok {
			if len(g.ToolAllow) == 0 && !g.ToolAskNone {
				return "--tool " + g.Tool
			}
			if s := find(g.ToolAllow, t.Allow, eqFold, "--tool "+g.Tool+" --allow"); s != "" {
				return s
			}
			if g.ToolAskNone && t.Ask == "none" {
				return "--tool " + g.Tool + " --ask none"
			}
		}
	}
	return ""
}

// lockConfig holds an exclusive flock on agent name's Config folder,
// opened through no link, until the returned func is called.
func lockConfig(home, name string) (func(), error) {
	l, _, err := agentIn(home, name)
	if err != nil {
		return nil, err
	}
	fd, err := ownerfile.OpenPath(l.ConfigDir(name), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", l.ConfigDir(name), err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("locking %s: %w", l.ConfigDir(name), err)
	}
	return func() { unix.Close(fd) }, nil
}
