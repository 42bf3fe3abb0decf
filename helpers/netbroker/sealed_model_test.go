package netbroker

import (
	"maps"
	"strings"
	"testing"

	"lnk.dev/lnk/caps"
)

// The agent's own model key, AGENT_<AGENT>_MODEL_KEY as the secrets
// package names it, is the one sealed secret whose route passes
// inference only: another secret of the agent, another agent's model key
// granted to it, and a run naming no agent stay plain sealed secrets.
func TestModelKeyIsInferenceOnly(t *testing.T) {
	names := []string{"AGENT_MY_BOT_MODEL_KEY", "AGENT_OTHER_MODEL_KEY", "GITHUB_TOKEN"}
	for _, tc := range []struct {
		agent string
		want  map[string]bool
	}{
		{"my-bot", map[string]bool{"AGENT_MY_BOT_MODEL_KEY": true}},
		{"My.Bot", map[string]bool{"AGENT_MY_BOT_MODEL_KEY": true}},
		{"other", map[string]bool{"AGENT_OTHER_MODEL_KEY": true}},
		{"third", nil},
		{"", nil},
	} {
		c := &caps.Compiled{AgentID: strings.Repeat("ab", 16), AgentName: tc.agent}
		rules, err := RulesFrom(c)
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(Config{Rules: rules, Log: func(Event) {}})
		if err != nil {
			t.Fatal(err)
		}
		s, err := sealedRoutes(c.AgentID, NewSecret(), &SealedOptions{Names: names, Source: keySource{}})
		if err != nil {
			t.Fatal(err)
		}
		bindSealed(s, p)
		if !maps.Equal(s.Inference, tc.want) {
			t.Errorf("agent %q: inference-only routes %v, want %v", tc.agent, s.Inference, tc.want)
		}
	}
}
