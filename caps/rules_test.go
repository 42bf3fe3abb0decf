package caps

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/refusal"
	"lnk.dev/lnk/internal/testenv"
)

// ruleCase is one grant and the rule that must refuse it (nil: allowed).
type ruleCase struct {
	name  string
	write bool   // a write grant; else read
	path  string // as the owner writes it
	want  *Refusal
}

// covered records which rules a case hit, for TestEveryRuleHasACase.
var covered = map[string]bool{}

func hit(t *testing.T, err error, want *Refusal) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("refused, want allowed: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("got %v, want a refusal by rule %s", err, want.Rule)
	}
	if ruleOf(err) != want.Rule {
		t.Fatalf("error %v carries no rule %s", err, want.Rule)
	}
	covered[want.Rule] = true
}

// ruleOf is the rule err names: a refusal's (internal/refusal) or a spec
// error's.
func ruleOf(err error) string {
	if r := refusal.RuleOf(err); r != "" {
		return r
	}
	var se *SpecError
	if errors.As(err, &se) {
		return se.Rule()
	}
	return ""
}

// TestFolderRules is the table of rules on [files] grants: each case is
// a real path in a temporary HOME, made absolute, checked, then resolved.
func TestFolderRules(t *testing.T) {
	home := testenv.Home(t)
	l := Layout{Home: home}
	a, err := CreateAgent(home, "mine")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreateAgent(home, "other"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"Projects/x/.git", ".ssh", ".config", "Library/LaunchAgents", ".lnk/bin", "Link/History", "Link/Teams/t", "bin/lnk", "Link/Agents/mine/Harnesses/h", "tools/bin", "rt/bus"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(home, "Projects"), filepath.Join(home, "P")); err != nil {
		t.Fatal(err)
	}
	c := checker{l: l, self: a.Name, lnkDir: filepath.Join(home, "bin", "lnk"),
		pathDirs: []string{filepath.Join(home, "tools", "bin")}, runtimeDirs: []string{filepath.Join(home, "rt")}}
	base := l.FilesDir(a.Name)
	cases := []ruleCase{
		{"a project folder written", true, "~/Projects/x", nil},
		{"a folder of its Home written", true, "work", nil},
		{"the whole home read", false, "~", nil},
		{"a dot folder read", false, "~/.config", nil},
		{"home written", true, "~", ErrHomeFolder},
		{"home written by absolute path", true, home, ErrHomeFolder},
		{"the root written", true, "/", ErrHoldsHome},
		{"home's parent written", true, filepath.Dir(home), ErrHoldsHome},
		{"~/.ssh written", true, "~/.ssh", ErrDotFolder},
		{"~/.config written", true, "~/.config/", ErrDotFolder},
		{"a new dot folder written", true, "~/.local/bin", ErrDotFolder},
		{"LaunchAgents written", true, "~/Library/LaunchAgents", ErrLaunchAgents},
		{"~/Library written", true, "~/Library", ErrLaunchAgents},
		{"Link's settings read", false, "~/.lnk", ErrLinkSettings},
		{"Link's settings written", true, "~/.lnk/bin", ErrLinkSettings},
		{"lnk's own folder written", true, "~/bin/lnk", ErrLinkOwn},
		{"the folder holding lnk written", true, "~/bin", ErrLinkOwn},
		{"another agent's Home written", true, "~/Link/Agents/other/Home", ErrOtherAgent},
		{"another agent's folder read", false, "~/Link/Agents/other", ErrOtherAgent},
		{"all agents read", false, "~/Link/Agents", ErrOtherAgent},
		{"its own Config read", false, "~/Link/Agents/mine/Config", ErrOwnAgentDir},
		{"its own Agent folder written", true, "~/Link/Agents/mine/Agent", ErrOwnAgentDir},
		{"a harness home written", true, "~/Link/Agents/mine/Harnesses/h", ErrHarnessHome},
		{"History read", false, "~/Link/History", ErrHidden},
		{"a team's folder read", false, "~/Link/Teams/t", ErrHidden},
		{"~/Link written", true, "~/Link", ErrHoldsHidden},
		{"a folder on PATH written", true, "~/tools/bin", ErrOnPath},
		{"a folder holding one on PATH written", true, "~/tools", ErrOnPath},
		{"a folder on PATH read", false, "~/tools/bin", nil},
		{"the runtime folder read", false, "~/rt", ErrSessionDir},
		{"a socket in the runtime folder read", false, "~/rt/bus", ErrSessionDir},
		{"through a symlink", false, "~/P/x", ErrSymlink},
		{"a symlink written", true, "~/P", ErrSymlink},
		{"a folder not there", false, "~/nope", ErrMissing},
		{"with ..", false, "~/Projects/../.ssh", ErrDotDot},
		{"with a NUL", false, "~/Pro\x00jects", ErrNUL},
		{"empty", false, "", ErrEmptyPath},
		{"~user", false, "~root/x", ErrBadPath},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := checkedPath(c, base, tc.path, tc.write)
			hit(t, err, tc.want)
		})
	}
}

// TestReadInsideWrite: a read-only folder is never inside a written one.
func TestReadInsideWrite(t *testing.T) {
	home := testenv.Home(t)
	os.MkdirAll(filepath.Join(home, "P", "sub"), 0o700)
	for _, tc := range []struct {
		name        string
		read, write []string
		want        *Refusal
	}{
		{"read inside written", []string{"~/P/sub"}, []string{"~/P"}, ErrReadInsideWrite},
		{"the same folder read and written", []string{"~/P"}, []string{"~/P"}, ErrReadInsideWrite},
		{"written inside read", []string{"~/P"}, []string{"~/P/sub"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompileSpec(home, "", &Spec{Files: &FilesSpec{Read: tc.read, Write: tc.write}})
			hit(t, err, tc.want)
		})
	}
}

// TestGrantRules is the table of rules on what isn't a folder: tools,
// hosts, ports, the network mode, commands and limits.
func TestGrantRules(t *testing.T) {
	home := testenv.Home(t)
	on := true
	for _, tc := range []struct {
		name string
		spec Spec
		want *Refusal
	}{
		{"a tool", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{"github": {Allow: []string{"search"}}}}}, nil},
		{"namespace task", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{"task": {}}}}, ErrNamespaceName},
		{"namespace agent", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{"Agent": {}}}}, ErrNamespaceName},
		{"memory of an agent", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{"memory-0123456789abcdef0123456789abcdef": {}}}}, ErrOwnTool},
		{"a tool with a dot", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{"my.tool": {}}}}, ErrBadToolName},
		{"a tool past 61", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{strings.Repeat("t", 62): {}}}}, ErrBadToolName},
		{"a tool with __", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{"gh__x": {}}}}, ErrBadToolName},
		{"a tool of 61 the harness offers", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{strings.Repeat("t", 61): {}, "git-hub_2": {}}}}, nil},
		{"run of an agent", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{"run-x": {}}}}, ErrOwnTool},
		{"scheduler", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{"scheduler-x": {}}}}, ErrOwnTool},
		{"file of an agent", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{"file-x": {}}}}, ErrOwnTool},
		{"a tool named with a slash", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{"a/b": {}}}}, ErrBadName},
		{"ask something else", Spec{Tools: &ToolsSpec{Grant: map[string]ToolSpec{"gh": {Ask: "always"}}}}, ErrBadAsk},
		{"strangers get memory", Spec{Tools: &ToolsSpec{Strangers: []string{"memory"}}}, nil},
		{"strangers get run", Spec{Tools: &ToolsSpec{Strangers: []string{"run"}}}, ErrStrangerTool},
		{"strangers get a scheduler", Spec{Tools: &ToolsSpec{Strangers: []string{"scheduler-abc"}}}, ErrStrangerTool},
		{"strangers get file and a granted tool", Spec{Tools: &ToolsSpec{Strangers: []string{"file", "gh"}, Grant: map[string]ToolSpec{"gh": {}}}}, nil},
		{"strangers get a tool not granted", Spec{Tools: &ToolsSpec{Strangers: []string{"gh"}}}, ErrStrangerNone},
		{"strangers get another agent's file", Spec{Tools: &ToolsSpec{Strangers: []string{"file-x"}}}, ErrStrangerNone},
		{"all ports with host", Spec{Localhost: &LocalhostSpec{Ports: []Port{"*"}}, Network: &NetworkSpec{Mode: "host"}}, nil},
		{"all ports behind the proxy", Spec{Localhost: &LocalhostSpec{Ports: []Port{"*"}}}, ErrAllPorts},
		{"port 0", Spec{Localhost: &LocalhostSpec{Ports: []Port{"0"}}}, ErrBadPort},
		{"port 65536", Spec{Localhost: &LocalhostSpec{Ports: []Port{"65536"}}}, ErrBadPort},
		{"port with a sign", Spec{Localhost: &LocalhostSpec{Ports: []Port{"+80"}}}, ErrBadPort},
		{"mode bridge", Spec{Network: &NetworkSpec{Mode: "bridge"}}, ErrBadMode},
		{"an internet host", Spec{Internet: &InternetSpec{On: &on, Hosts: []string{"API.example.com", "*.example.org", "10.0.0.1"}}}, nil},
		{"a host with a path", Spec{Internet: &InternetSpec{Hosts: []string{"example.com/x"}}}, ErrBadHost},
		{"a lan host with a space", Spec{LAN: &HostsSpec{Hosts: []string{"nas local"}}}, ErrBadHost},
		{"a browser host with a scheme", Spec{Browser: &HostsSpec{Hosts: []string{"https://x.com"}}}, ErrBadHost},
		{"tcp without a port", Spec{Internet: &InternetSpec{TCP: []string{"db.example.com"}}}, ErrBadHost},
		{"tcp with a wildcard", Spec{Internet: &InternetSpec{TCP: []string{"*.x.com:5432"}}}, ErrBadHost},
		{"negative per_minute", Spec{Internet: &InternetSpec{PerMinute: -1}}, ErrBadLimit},
		{"a command by path", Spec{Commands: &CommandsSpec{Allow: []string{"/usr/bin/python3", "*"}}}, nil},
		{"a command with ..", Spec{Commands: &CommandsSpec{Allow: []string{"/usr/../bin/sh"}}}, ErrBadCommand},
		{"a command with a slash", Spec{Commands: &CommandsSpec{Allow: []string{"bin/sh"}}}, ErrBadCommand},
		{"a bad timeout", Spec{Tool: &ToolLimitsSpec{Run: &RunLimitsSpec{Timeout: "soon"}}}, ErrBadLimit},
		{"a negative timeout", Spec{Tool: &ToolLimitsSpec{Run: &RunLimitsSpec{Timeout: "-1s"}}}, ErrBadLimit},
		{"negative notes", Spec{Tool: &ToolLimitsSpec{Memory: &MemoryLimitsSpec{Notes: -5}}}, ErrBadLimit},
		{"a team folder read inside written", Spec{Teams: map[string]TeamGrant{"t": {Read: []string{"docs"}, Write: []string{"."}}}}, ErrReadInsideWrite},
		{"a team folder two levels down", Spec{Teams: map[string]TeamGrant{"t": {Read: []string{"a/b"}}}}, ErrBadName},
		{"a model with a newline", Spec{Model: &ModelSpec{Allow: []string{"gpt\n"}}}, ErrBadModel},
		{"a model with a space", Spec{Model: &ModelSpec{Allow: []string{"gpt 4"}}}, ErrBadModel},
		{"a model past ASCII", Spec{Model: &ModelSpec{Allow: []string{"modèle"}}}, ErrBadModel},
		{"a model as providers name them", Spec{Model: &ModelSpec{Allow: []string{"anthropic/claude-3.5:beta", "gpt-4o-mini"}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompileSpec(home, "", &tc.spec)
			hit(t, err, tc.want)
		})
	}
}

// TestHarnessLayerSetsOnlyWhatItMay: strangers, [tool.*] and [run] are
// the agent's own spec's alone.
func TestHarnessLayerSetsOnlyWhatItMay(t *testing.T) {
	home := testenv.Home(t)
	for _, s := range []Spec{
		{Tools: &ToolsSpec{Strangers: []string{"memory"}}},
		{Tool: &ToolLimitsSpec{Run: &RunLimitsSpec{Timeout: "1h"}}},
		{Run: &RunSpec{IdleAfter: "1h"}},
	} {
		_, err := Compile(Input{Home: home, Harness: &Layer{Whose: "harness h", File: "h.toml", Spec: &s}})
		hit(t, err, ErrHarnessOnly)
	}
}

func TestNamesOfAgents(t *testing.T) {
	home := testenv.Home(t)
	for _, n := range []string{"", ".", "..", ".hidden", "a/b", "a b", "é", "x\x00", string(make([]byte, 65))} {
		_, err := CreateAgent(home, n)
		hit(t, err, ErrBadName)
	}
	for _, n := range []string{"a", "A-b_c.d", "main"} {
		if _, err := CreateAgent(home, n); err != nil {
			t.Fatalf("%q: %v", n, err)
		}
	}
	_, err := CreateAgent(home, "main")
	hit(t, err, ErrAgentExists)
}
