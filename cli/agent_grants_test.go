package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// TestAllowDenyEveryFlagReadBack: each flag of lnk agent allow and deny,
// run as the command, then Config/sandbox.toml read back and the agent's
// grants compiled again: allow puts the grant in both, deny takes it out
// of both. --internet is read back as on after allow and off after deny
// (deny --internet once turned it on).
func TestAllowDenyEveryFlagReadBack(t *testing.T) {
	home := testenv.Home(t)
	site := filepath.Join(home, "Projects", "site")
	docs := filepath.Join(home, "Docs")
	for _, d := range []string{site, docs} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errs := runLnk(t, "agent", "create", "ada"); code != ExitOK {
		t.Fatal(errs)
	}
	file := caps.Layout{Home: home}.SandboxFile("ada")
	read := func(t *testing.T) (*caps.Spec, *caps.Compiled) {
		t.Helper()
		s, err := caps.ReadSpecFile(file)
		if err != nil {
			t.Fatal(err)
		}
		c, err := caps.CompileAgent(home, "ada")
		if err != nil {
			t.Fatal(err)
		}
		return s, c
	}
	folder := func(c *caps.Compiled, p string, write bool) bool {
		for _, f := range c.Folders {
			if f.Path == p && f.Access.Write == write {
				return true
			}
		}
		return false
	}
	var ports []string
	for _, tc := range []struct {
		flags []string
		has   func(*caps.Spec, *caps.Compiled) (inFile, compiled bool)
	}{
		{[]string{"--read", "~/Docs"}, func(s *caps.Spec, c *caps.Compiled) (bool, bool) {
			return s.Files != nil && slices.Contains(s.Files.Read, "~/Docs"), folder(c, docs, false)
		}},
		{[]string{"--write", "~/Projects/site"}, func(s *caps.Spec, c *caps.Compiled) (bool, bool) {
			return s.Files != nil && slices.Contains(s.Files.Write, "~/Projects/site"), folder(c, site, true)
		}},
		{[]string{"--internet-host", "API.example.com"}, func(s *caps.Spec, c *caps.Compiled) (bool, bool) {
			return s.Internet != nil && slices.Contains(s.Internet.Hosts, "api.example.com"), slices.Contains(c.Internet.Hosts, "api.example.com")
		}},
		{[]string{"--tcp", "db.example.com:5432"}, func(s *caps.Spec, c *caps.Compiled) (bool, bool) {
			return s.Internet != nil && slices.Contains(s.Internet.TCP, "db.example.com:5432"), slices.Contains(c.Internet.TCP, "db.example.com:5432")
		}},
		{[]string{"--network-mode", "host"}, func(s *caps.Spec, c *caps.Compiled) (bool, bool) {
			return s.Network != nil && s.Network.Mode == "host", c.NetworkMode == "host"
		}},
		{[]string{"--lan-host", "nas.local"}, func(s *caps.Spec, c *caps.Compiled) (bool, bool) {
			return s.LAN != nil && slices.Contains(s.LAN.Hosts, "nas.local"), slices.Contains(c.LANHosts, "nas.local")
		}},
		{[]string{"--port", "8080"}, func(s *caps.Spec, c *caps.Compiled) (bool, bool) {
			ports = ports[:0]
			if s.Localhost != nil {
				for _, p := range s.Localhost.Ports {
					ports = append(ports, string(p))
				}
			}
			return slices.Contains(ports, "8080"), slices.Contains(c.LocalhostPorts, 8080)
		}},
		{[]string{"--tool", "github", "--allow", "search_code"}, func(s *caps.Spec, c *caps.Compiled) (bool, bool) {
			in := s.Tools != nil && slices.Contains(s.Tools.Grant["github"].Allow, "search_code")
			return in, slices.Contains(c.Tools["github"].Allow, "search_code")
		}},
		{[]string{"--tool", "gitlab", "--ask", "none"}, func(s *caps.Spec, c *caps.Compiled) (bool, bool) {
			in := s.Tools != nil && s.Tools.Grant["gitlab"].Ask == "none"
			return in, c.Tools["gitlab"].AskNone
		}},
		{[]string{"--command", "python3"}, func(s *caps.Spec, c *caps.Compiled) (bool, bool) {
			return s.Commands != nil && slices.Contains(s.Commands.Allow, "python3"), slices.Contains(c.Commands, "python3")
		}},
	} {
		name := strings.Join(tc.flags, " ")
		t.Run(name, func(t *testing.T) {
			args := append([]string{"agent", "allow", "ada"}, tc.flags...)
			if code, _, errs := runLnk(t, args...); code != ExitOK {
				t.Fatalf("allow %s: %s", name, errs)
			}
			if f, c := tc.has(read(t)); !f || !c {
				t.Fatalf("after allow %s: in the file %v, compiled %v", name, f, c)
			}
			args[1] = "deny"
			if code, _, errs := runLnk(t, args...); code != ExitOK {
				t.Fatalf("deny %s: %s", name, errs)
			}
			if f, c := tc.has(read(t)); f || c {
				t.Fatalf("after deny %s: still in the file %v, compiled %v", name, f, c)
			}
		})
	}

	internet := func(t *testing.T) (*bool, bool) {
		s, c := read(t)
		if s.Internet == nil {
			return nil, c.Internet.On
		}
		return s.Internet.On, c.Internet.On
	}
	if code, _, errs := runLnk(t, "agent", "deny", "ada", "--internet"); code != ExitOK {
		t.Fatal(errs)
	}
	if f, c := internet(t); f == nil || *f || c {
		t.Fatalf("after deny --internet: file on=%v, compiled on=%v; want both off", f, c)
	}
	if code, _, errs := runLnk(t, "agent", "allow", "ada", "--internet"); code != ExitOK {
		t.Fatal(errs)
	}
	if f, c := internet(t); f == nil || !*f || !c {
		t.Fatalf("after allow --internet: file on=%v, compiled on=%v; want both on", f, c)
	}
	code, _, errs := runLnk(t, "agent", "deny", "ada", "--internet=false")
	if code != ExitRefused || !strings.Contains(errs, "rule deny-internet-false") || !strings.Contains(errs, "hint: lnk agent allow ada --internet") {
		t.Fatalf("deny --internet=false: exit %d: %s", code, errs)
	}
	if f, c := internet(t); f == nil || !*f || !c {
		t.Fatalf("a refused deny changed [internet]: file on=%v, compiled on=%v", f, c)
	}

	// Grants nothing enforces yet are refused by allow, and the file and
	// the grants stay as they were.
	before, _ := os.ReadFile(file)
	for _, flags := range [][]string{{"--browser-host", "github.com"}, {"--model", "claude-sonnet"}} {
		code, _, errs := runLnk(t, append([]string{"agent", "allow", "ada"}, flags...)...)
		if code != ExitRefused || !strings.Contains(errs, "rule not-enforced-yet") {
			t.Fatalf("allow %s: exit %d: %s", flags, code, errs)
		}
		_, c := read(t)
		if len(c.BrowserHosts)+len(c.Models) != 0 {
			t.Fatalf("allow %s refused, but compiled: %v %v", flags, c.BrowserHosts, c.Models)
		}
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Fatalf("a refused allow wrote the file:\n%s", after)
	}
}
