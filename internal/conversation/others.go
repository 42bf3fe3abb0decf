package conversation

import "strings"

// NotOthers says why a message from others (from, a sender's name as
// Link-From gives it: stranger:<kind>:<name>, schedule:<id>, run:<id>,
// task-<id>, …) may not go into thread, or "" if it may. A stranger's
// goes only to the conversation named as it (stranger:webhook:ci into
// webhook:ci), so nothing it says reaches the owner's or another's; no
// other sender's goes to a stranger's, where its turn would run with
// the tools its sender may have beside what the stranger wrote. The
// endpoint of Link Harness and the agent's way in both ask it.
func NotOthers(from, thread string) string {
	if own, ok := strings.CutPrefix(from, "stranger:"); ok {
		if thread != own || !Strangers(own) {
			return "a stranger's message goes only to its own conversation (" + own + "), not " + thread
		}
		return ""
	}
	if Strangers(thread) {
		return "a message from " + from + " never goes to a stranger's conversation (" + thread + ")"
	}
	return ""
}
