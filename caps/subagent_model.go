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
