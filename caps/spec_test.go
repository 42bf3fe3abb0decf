package caps

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"lnk.dev/lnk/internal/testenv"
)

// TestParseSpecRefusesNamingFileLineAndKey: an unknown key, a wrong type
// and a syntax error each name the file, the line and the key.
func TestParseSpecRefusesNamingFileLineAndKey(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       *Refusal
		line       int
		key        string
	}{
		{"unknown table", "[files]\nread = [\"~\"]\n\n[filez]\nread = []\n", ErrSpecUnknownKey, 4, "filez"},
		{"unknown key", "[internet]\nhosts = []\nproxy = \"x\"\n", ErrSpecUnknownKey, 3, "internet.proxy"},
		{"unknown tool key", "[tools.grant.gh]\nallow = [\"a\"]\nask_me = 1\n", ErrSpecUnknownKey, 3, "tools.grant.gh.ask_me"},
		{"a string for a list", "[files]\nwrite = \"~/x\"\n", ErrSpecWrongType, 2, "files.write"},
		{"a number for a bool", "\n[internet]\non = 1\n", ErrSpecWrongType, 3, "internet.on"},
		{"a bool for a port", "[localhost]\nports = [8080, true]\n", ErrSpecWrongType, 2, "localhost.ports"},
		{"syntax", "[files\nread = 1\n", ErrSpecSyntax, 2, ""},
		{"a NUL byte", "[files]\nread = [\"a\x00\"]\n", ErrSpecSyntax, 0, ""},
		{"too big", strings.Repeat("#", MaxSpecSize+1), ErrSpecTooBig, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSpec("/x/sandbox.toml", []byte(tc.text))
			hit(t, err, tc.want)
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("%T is no *SpecError", err)
			}
			if se.File != "/x/sandbox.toml" || se.Line != tc.line || se.Key != tc.key {
				t.Fatalf("got file %q line %d key %q, want line %d key %q (%v)", se.File, se.Line, se.Key, tc.line, tc.key, err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "/x/sandbox.toml") {
				t.Fatalf("message %q is not one line naming the file", msg)
			}
		})
	}
}

// TestSpecRoundTrip: what EncodeSpec writes, ParseSpec reads back the same.
func TestSpecRoundTrip(t *testing.T) {
	on := true
	s := &Spec{
		Files:     &FilesSpec{Read: []string{"~"}, Write: []string{"work", "~/P"}},
		Internet:  &InternetSpec{On: &on, Hosts: []string{"api.x.com"}, PerMinute: 30, TCP: []string{"db.x.com:5432"}},
		Commands:  &CommandsSpec{Allow: []string{"git"}},
		Localhost: &LocalhostSpec{Ports: []Port{"8080", "*"}},
		LAN:       &HostsSpec{Hosts: []string{"nas.local"}},
		Network:   &NetworkSpec{Mode: "host"},
		Browser:   &HostsSpec{Hosts: []string{"github.com"}},
		Tools:     &ToolsSpec{Strangers: []string{"memory"}, Grant: map[string]ToolSpec{"gh": {Allow: []string{"search"}, Ask: "none"}}},
		Teams:     map[string]TeamGrant{"t": {Read: []string{"docs"}, Write: []string{"out"}}},
		Model:     &ModelSpec{Allow: []string{"claude"}},
		Tool:      &ToolLimitsSpec{Run: &RunLimitsSpec{Timeout: "90s", Output: 1000}, Memory: &MemoryLimitsSpec{Notes: 100}, Scheduler: &SchedulerLimitsSpec{Hops: 3}},
		Run:       &RunSpec{IdleAfter: "10m"},
	}
	data, err := EncodeSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSpec("x", data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if !reflect.DeepEqual(s, back) {
		t.Fatalf("round trip differs:\n%s\n%#v", data, back)
	}
}

// TestDefaultsAndLimits: an agent with an empty spec gets Link's
// defaults, and a limit set in its spec replaces the default.
func TestDefaultsAndLimits(t *testing.T) {
	home := testenv.Home(t)
	a, err := CreateAgent(home, "d")
	if err != nil {
		t.Fatal(err)
	}
	c, err := CompileAgent(home, "d")
	if err != nil {
		t.Fatal(err)
	}
	l := Layout{Home: home}
	if !c.Internet.On || c.Internet.Hosts != nil || c.AgentID != a.ID || len(c.AgentID) != 32 {
		t.Fatalf("defaults: %+v", c)
	}
	// The agent's instructions, skills and chats are read, never written.
	want := []Folder{
		{Path: l.OwnDir("d") + "/chats", Access: Access{Read: true}},
		{Path: l.OwnDir("d") + "/instructions", Access: Access{Read: true}},
		{Path: l.OwnDir("d") + "/skills", Access: Access{Read: true}},
		{Path: l.FilesDir("d"), Access: Access{Read: true}},
		{Path: l.FilesDir("d") + "/work", Access: Access{Read: true, Write: true}},
	}
	// Each folder carries the identity of the folder checked.
	got := append([]Folder(nil), c.Folders...)
	for i, f := range got {
		if _, id, err := ResolveID(f.Path); err != nil || f.ID != id || id == (FileID{}) {
			t.Errorf("%s: ID %+v, the folder's %+v (%v)", f.Path, f.ID, id, err)
		}
		got[i].ID = FileID{}
	}
	if !reflect.DeepEqual(got, want) || c.Limits != DefaultLimits {
		t.Fatalf("folders %+v limits %+v", c.Folders, c.Limits)
	}
	if err := writeFileAtomic(l.SandboxFile("d"), []byte("[tool.run]\ntimeout = \"30s\"\n[tool.scheduler]\nhops = 2\n")); err != nil {
		t.Fatal(err)
	}
	c, err = CompileAgent(home, "d")
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.Run.Timeout.String() != "30s" || c.Limits.Scheduler.Hops != 2 || c.Limits.Run.Output != DefaultLimits.Run.Output {
		t.Fatalf("limits %+v", c.Limits)
	}
	for _, h := range []string{l.Settings(), l.Agents(), l.History(), l.Teams()} {
		if !has(c.Hidden, h) {
			t.Fatalf("%s not hidden: %v", h, c.Hidden)
		}
	}
}

// TestRunLimitDefaultsAreTheSpecs: a sandbox file naming no [tool.run]
// compiles to the spec's numbers, each written here as the spec says it
// (2 min, 64 KiB, 4 at once, 1 h, 100 a day, 1 MiB, 24 h), never read
// from Link's own table, which a change could move unseen.
func TestRunLimitDefaultsAreTheSpecs(t *testing.T) {
	home := testenv.Home(t)
	if _, err := CreateAgent(home, "d"); err != nil {
		t.Fatal(err)
	}
	c, err := CompileAgent(home, "d")
	if err != nil {
		t.Fatal(err)
	}
	want := RunLimits{Timeout: 120 * time.Second, Output: 65536, Background: 4, BackgroundTimeout: 3600 * time.Second,
		BackgroundPerDay: 100, BackgroundOutput: 1048576, BackgroundKeep: 86400 * time.Second}
	if c.Limits.Run != want {
		t.Fatalf("[tool.run] defaults %+v, the spec's %+v", c.Limits.Run, want)
	}
	// Each is the agent's own once its file says it (the control that
	// the compile reads them).
	l := Layout{Home: home}
	spec := "[tool.run]\ntimeout = \"10s\"\noutput = 100\nbackground = 1\nbackground_timeout = \"1m\"\nbackground_per_day = 2\nbackground_output = 200\nbackground_keep = \"1h\"\n"
	if err := writeFileAtomic(l.SandboxFile("d"), []byte(spec)); err != nil {
		t.Fatal(err)
	}
	if c, err = CompileAgent(home, "d"); err != nil {
		t.Fatal(err)
	}
	set := RunLimits{Timeout: 10 * time.Second, Output: 100, Background: 1, BackgroundTimeout: time.Minute,
		BackgroundPerDay: 2, BackgroundOutput: 200, BackgroundKeep: time.Hour}
	if c.Limits.Run != set {
		t.Fatalf("[tool.run] set %+v, want %+v", c.Limits.Run, set)
	}
}
