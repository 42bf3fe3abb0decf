package serve

import "strings"

// toolsFor is the tools a message from from may have its turn call (nil:
// every tool the agent has; empty: none). The owner's, a schedule's, a
// background command's ending and a subagent's are the agent's own
// business. A stranger's (a webhook's post, stranger:<name>) gets none,
// the closed default of [tools] strangers, which Link Harness doesn't
// read yet; nor does a teammate's or a team's (agent-<id>, team-<id>)
// until Teams is built: what others write never reaches a tool.
func toolsFor(from string) []string {
	switch {
	case from == "",
		strings.HasPrefix(from, "schedule:"),
		strings.HasPrefix(from, "run:"),
		strings.HasPrefix(from, "task-"):
		return nil
	}
	return []string{}
}
