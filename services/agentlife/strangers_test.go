package agentlife

import (
	"errors"
	"os"
	"slices"
	"testing"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/testenv"
)

// TestHarnessConfigStrangers: the agent's sandbox.toml [tools] strangers
// reaches Link Harness's config.json as its tools' names (file as
// file-<id>); unsaid, strangers get none; naming run, or a tool the agent
// has none of, refuses the start with the rule and a hint.
func TestHarnessConfigStrangers(t *testing.T) {
	home := testenv.Home(t)
	a, err := caps.CreateAgent(home, "helper")
	if err != nil {
		t.Fatal(err)
	}
	ports := &caps.PortBlock{First: 20000, Count: 2}
	file := caps.Layout{Home: home}.SandboxFile("helper")
	for _, tc := range []struct {
		toml string
		want []string
		err  *caps.Refusal
	}{
		{"", nil, nil},
		{"[tools]\nstrangers = [\"file\"]\n", []string{"file-" + a.ID}, nil},
		{"[tools]\nstrangers = [\"run\"]\n", nil, caps.ErrStrangerTool},
		{"[tools]\nstrangers = [\"gh\"]\n", nil, caps.ErrStrangerNone},
	} {
		a.Model = &caps.AgentModel{Format: caps.ModelBuiltin, BaseURL: "http://127.0.0.1:11434/v1"}
		if err := os.WriteFile(file, []byte(tc.toml), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := HarnessConfig(home, a, ports)
		if tc.err != nil {
			var r *caps.Refusal
			if !errors.As(err, &r) || r.Rule != tc.err.Rule || r.Hint == "" {
				t.Errorf("%q: %v, want rule %s with a hint", tc.toml, err, tc.err.Rule)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.toml, err)
		}
		if !slices.Equal(c.Strangers, tc.want) {
			t.Errorf("%q: config.json's strangers %q, want %q", tc.toml, c.Strangers, tc.want)
		}
	}
}
