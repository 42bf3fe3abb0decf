package serve

import "strings"

// toolsFor is the tools a message from from may have its turn call (nil:
// every tool the agent has; empty: none). The owner's, a schedule's, a
// background command's ending and a subagent's are the agent's own
// business. A stranger's (a webhook's post, stranger:<name>) gets only
// strangers, the tools [tools] strangers names (config.json's, checked
// at load never to hold run or the scheduler), none by default; a
// teammate's or a team's (agent-<id>, team-<id>) none until Teams is
// built: what others write never reaches another tool.
func toolsFor(from string, strangers []string) []string {
	switch {
	case from == "",
		strings.HasPrefix(from, "schedule:"),
		strings.HasPrefix(from, "run:"),
		strings.HasPrefix(from, "task-"):
		return nil
	case strings.HasPrefix(from, "stranger:"):
		return append([]string{}, strangers...)
	}
	return []string{}
}
