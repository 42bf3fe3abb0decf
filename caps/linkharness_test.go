package caps

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// CompileLinkHarness: the agent's grants, and Link Harness's home
// written, its chats written, memory read, schedule never; Link's own
// run and file tools without asking; a loopback model's port granted and
// marked a local model's. An agent naming another harness's program is
// refused; its own grants (CompileAgent) stay as they were.
func TestCompileLinkHarness(t *testing.T) {
	home := t.TempDir()
	a, err := CreateAgent(home, "ana")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UpdateAgent(home, "ana", func(a *Agent) error {
		a.Model = &AgentModel{Format: ModelBuiltin, BaseURL: "http://127.0.0.1:4242/v1"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c, err := CompileLinkHarness(home, "ana")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := layoutFor(home)
	own := l.OwnDir("ana")
	want := map[string]string{
		l.HarnessHome("ana", LinkHarness):  "rw",
		filepath.Join(own, "chats"):        "rw",
		own:                                "r",
		filepath.Join(own, "instructions"): "", // in Agent/'s own mount
	}
	got := map[string]string{}
	for _, f := range c.Folders {
		r := "r"
		if f.Access.Write {
			r = "rw"
		}
		got[f.Path] = r
		if strings.HasPrefix(f.Path, filepath.Join(own, "schedule")) {
			t.Fatalf("schedule/ granted: %+v", f)
		}
	}
	if !slices.Contains(c.Hidden, filepath.Join(own, "schedule")) {
		t.Errorf("schedule/ not hidden: %v", c.Hidden)
	}
	for p, r := range want {
		if got[p] != r {
			t.Errorf("%s: %q, want %q", p, got[p], r)
		}
	}
	if c.HarnessHome != l.HarnessHome("ana", LinkHarness) || c.Harness != LinkHarness || c.LogName() != "ana" {
		t.Errorf("home %q, harness %q, logged as %q", c.HarnessHome, c.Harness, c.LogName())
	}
	for _, n := range []string{"run-" + a.ID, "file-" + a.ID, "memory-" + a.ID, "scheduler-" + a.ID} {
		if tool, ok := c.Tools[n]; !ok || !tool.AskNone {
			t.Errorf("tool %s: %+v %v", n, tool, ok)
		}
	}
	if len(c.LocalModelPorts) != 1 || c.LocalModelPorts[0] != 4242 || !containsPort(c.LocalhostPorts, 4242) {
		t.Errorf("model port: local %v, localhost %v", c.LocalModelPorts, c.LocalhostPorts)
	}
	// The agent's own sandbox (run's calls, lnk sandbox run --agent) is
	// not widened: chats read-only, no harness home, no tools.
	ag, err := CompileAgent(home, "ana")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ag.Folders {
		if f.Access.Write && strings.HasPrefix(f.Path, own) || strings.HasPrefix(f.Path, l.HarnessHome("ana", LinkHarness)) {
			t.Errorf("the agent's own sandbox got %+v", f)
		}
	}
	if len(ag.Tools) != 0 || len(ag.LocalModelPorts) != 0 {
		t.Errorf("the agent's own sandbox got tools %v, model ports %v", ag.Tools, ag.LocalModelPorts)
	}
	if _, err := UpdateAgent(home, "ana", func(a *Agent) error { a.Start = &AgentStart{Command: []string{"/bin/true"}}; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := CompileLinkHarness(home, "ana"); !errors.Is(err, ErrNotLinkHarness) {
		t.Fatalf("an agent with a [start] command: %v", err)
	}
}

func TestParseModelFlag(t *testing.T) {
	for in, want := range map[string]AgentModel{
		"builtin": {Format: ModelBuiltin},
		"openai:http://127.0.0.1:11434/v1:llama3:8b":      {Format: "openai", BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3:8b"},
		"anthropic:https://api.anthropic.com/v1:claude-x": {Format: "anthropic", BaseURL: "https://api.anthropic.com/v1", Model: "claude-x"},
	} {
		m, err := ParseModelFlag(in)
		if err != nil || *m != want {
			t.Errorf("%s: %+v, %v", in, m, err)
		}
	}
	for _, in := range []string{"", "openai", "openai:http://127.0.0.1:11434:m", "gopher:http://h/v1:m", "openai:file:///etc/v1:m", "openai:http://h/v1:", "openai:http://u:p@h/v1:m"} {
		if _, err := ParseModelFlag(in); err == nil {
			t.Errorf("%q taken", in)
		}
	}
	if (&AgentModel{Format: ModelBuiltin, BaseURL: "http://10.0.0.1:1/v1"}).Check() == nil {
		t.Error("a built-in off loopback taken")
	}
}

// --fallback: a provider's FORMAT:URL:MODEL, or none; never the
// built-in, and [model.fallback] has no fallback of its own.
func TestParseFallbackFlag(t *testing.T) {
	m, err := ParseFallbackFlag("anthropic:https://api.anthropic.com/v1:claude-x")
	if err != nil || *m != (AgentModel{Format: "anthropic", BaseURL: "https://api.anthropic.com/v1", Model: "claude-x"}) {
		t.Fatalf("%+v, %v", m, err)
	}
	if m, err := ParseFallbackFlag("none"); m != nil || err != nil {
		t.Fatalf("none: %+v, %v", m, err)
	}
	for _, in := range []string{"builtin", "", "openai:http://h:1:m"} {
		if _, err := ParseFallbackFlag(in); err == nil {
			t.Errorf("%q taken", in)
		}
	}
	local := AgentModel{Format: "openai", BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3"}
	for _, fb := range []*AgentModel{
		{Format: ModelBuiltin},
		{Format: "anthropic", BaseURL: "https://h/v1", Model: "c", Fallback: &AgentModel{Format: "openai", BaseURL: "https://h/v1", Model: "d"}},
		{Format: "anthropic", BaseURL: "ftp://h/v1", Model: "c"},
	} {
		m := local
		m.Fallback = fb
		if m.Check() == nil {
			t.Errorf("[model.fallback] %+v taken", fb)
		}
	}
	m2 := local
	m2.Fallback = &AgentModel{Format: "anthropic", BaseURL: "https://h/v1", Model: "c"}
	if err := m2.Check(); err != nil {
		t.Errorf("a good fallback: %v", err)
	}
}
