package caps

import "testing"

// TestHarnessModel: the agent's own model as Link Harness names it is
// the built-in's name without [model] or with a builtin one, else
// [model] model.
func TestHarnessModel(t *testing.T) {
	for _, c := range []struct {
		m    *AgentModel
		want string
	}{
		{nil, BuiltinModelName},
		{&AgentModel{Format: ModelBuiltin, BaseURL: "http://127.0.0.1:1/v1"}, BuiltinModelName},
		{&AgentModel{Format: "openai", BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3.2"}, "llama3.2"},
	} {
		if got := (&Agent{Model: c.m}).HarnessModel(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.m, got, c.want)
		}
	}
}
