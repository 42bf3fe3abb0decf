package caps

import (
	"os"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

// TestDenyInternetTurnsItOff: Deny with --internet writes [internet]
// on = false and compiles to no internet; --internet=false is refused
// and writes nothing; Allow with --internet turns it back on (the
// positive control).
func TestDenyInternetTurnsItOff(t *testing.T) {
	home := testenv.Home(t)
	if _, err := CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	c, err := Deny(home, "ada", Grants{Internet: &yes})
	if err != nil || c.Internet.On {
		t.Fatalf("deny --internet: %v, on %v", err, c != nil && c.Internet.On)
	}
	file := Layout{Home: home}.SandboxFile("ada")
	s, err := ReadSpecFile(file)
	if err != nil || s.Internet == nil || s.Internet.On == nil || *s.Internet.On {
		t.Fatalf("the file after deny --internet: %+v %v", s.Internet, err)
	}
	before, _ := os.ReadFile(file)
	_, err = Deny(home, "ada", Grants{Internet: &no})
	hit(t, err, ErrDenyInternet)
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Fatal("a refused deny wrote the file")
	}
	if c, err := Allow(home, "ada", Grants{Internet: &yes}); err != nil || !c.Internet.On {
		t.Fatalf("allow --internet: %v", err)
	}
	if c, _ := CompileAgent(home, "ada"); !c.Internet.On {
		t.Fatal("allow --internet: compiled off")
	}
}

// TestNotEnforcedRefusedAndShown: Allow refuses [browser] and [model],
// which nothing enforces yet, writing nothing; a file that has them
// shows them as "not enforced yet", never with a route; deny takes
// them out.
func TestNotEnforcedRefusedAndShown(t *testing.T) {
	home := testenv.Home(t)
	if _, err := CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	file := Layout{Home: home}.SandboxFile("ada")
	before, _ := os.ReadFile(file)
	for _, g := range []Grants{{BrowserHosts: []string{"github.com"}}, {Models: []string{"claude"}}} {
		_, err := Allow(home, "ada", g)
		hit(t, err, ErrNotEnforced)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Fatal("a refused allow wrote the file")
	}
	if _, err := Allow(home, "ada", Grants{LANHosts: []string{"nas.local"}}); err != nil {
		t.Fatalf("an enforced grant beside them: %v", err)
	}
	if err := os.WriteFile(file, []byte("[browser]\nhosts = [\"github.com\"]\n[model]\nallow = [\"claude\"]\n[lan]\nhosts = [\"nas.local\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines, _, err := Permissions(home, "ada")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, l := range lines {
		seen[l.Grant] = l.Route
	}
	for grant, route := range map[string]string{"browser host": RouteNone, "model": RouteNone, "lan host": RouteProxy, "limits": RouteNone, "run limits": RouteRunTool} {
		if seen[grant] != route {
			t.Errorf("%s: route %q, want %q", grant, seen[grant], route)
		}
	}
	c, err := Deny(home, "ada", Grants{BrowserHosts: []string{"github.com"}, Models: []string{"claude"}})
	if err != nil || len(c.BrowserHosts)+len(c.Models) != 0 {
		t.Fatalf("deny: %v %+v", err, c)
	}
}

// TestStrangersRoute: [tools] strangers is shown enforced by Link
// Harness for an agent that runs it, and "not enforced yet" for one
// whose [start] command is another harness.
func TestStrangersRoute(t *testing.T) {
	home := testenv.Home(t)
	if _, err := CreateAgent(home, "ada"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(Layout{Home: home}.SandboxFile("ada"), []byte("[tools]\nstrangers = [\"file\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	route := func() string {
		t.Helper()
		lines, _, err := Permissions(home, "ada")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if l.Grant == "strangers tool" && l.Value == "file" {
				return l.Route
			}
		}
		t.Fatalf("no strangers line in %+v", lines)
		return ""
	}
	if r := route(); r != RouteStrangers {
		t.Errorf("under Link Harness: route %q, want %q", r, RouteStrangers)
	}
	if _, err := UpdateAgent(home, "ada", func(a *Agent) error { a.Start = &AgentStart{Command: []string{"/bin/true"}}; return nil }); err != nil {
		t.Fatal(err)
	}
	if r := route(); r != RouteNone {
		t.Errorf("under another harness: route %q, want %q", r, RouteNone)
	}
}
