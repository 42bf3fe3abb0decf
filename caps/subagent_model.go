package caps

import "slices"

// SubagentModelAllowed reports whether a subagent may run on model m
// (security.txt "Messages from others": "only ever one of the spec's
// [model] allow"): the agent's own model (own; [model] allow empty
// means the harness's own), or one [model] allow names (allow, the
// compiled Models). An empty name is the agent's own. The scheduler
// checks it when it starts one and Link Harness at each of its turns.
func SubagentModelAllowed(allow []string, own, m string) bool {
	return m == "" || (own != "" && m == own) || slices.Contains(allow, m)
}

// BuiltinModelName is the name Link's built-in model answers to.
const BuiltinModelName = "link-builtin"

// HarnessModel is the model Link Harness runs the agent's conversations
// on, as it names it (_meta link.local/model, the own of
// SubagentModelAllowed): the built-in's name when agent.toml has no
// [model] or a builtin one, else its model.
func (a *Agent) HarnessModel() string {
	if a.Model == nil || a.Model.Format == ModelBuiltin {
		return BuiltinModelName
	}
	return a.Model.Model
}
