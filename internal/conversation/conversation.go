// Package conversation is whose a conversation is, told by its name as
// Link Harness names it: the one rule the harness's endpoint (an owner's
// message), lnk agent send, the agent's way in and the memory tool
// (remember) apply.
//
// # Security
//
// Fails closed: a name that is no conversation of the owner's in the
// forms Link makes (empty, a path, a sender's name) is not the owner's.
// A conversation named as its sender (<kind>:<name>, as webhook:<name>)
// is that sender's; agent-<id> a teammate's; team-<id> a team's;
// task-<id> a subagent's. What a stranger wrote stays in its own
// conversation: an owner's turn there would run with every tool beside
// it, and so would a schedule's, a command's ending or a subagent's
// answer (NotOthers, which the endpoint and the way in both ask); a
// stranger's message goes into no conversation but its own.
package conversation

import "strings"

// NotOwners says why thread is not one of the owner's own conversations,
// or "" if it is one.
func NotOwners(thread string) string {
	switch {
	case thread == "":
		return "this names no conversation, so it cannot be shown to be one of the owner's"
	case strings.HasPrefix(thread, "agent-"):
		return "this conversation is with another agent (" + thread + ")"
	case strings.HasPrefix(thread, "team-"):
		return "this conversation is a team's (" + thread + ")"
	case Subagents(thread):
		return "this conversation is a subagent's (" + thread + ")"
	case strings.Contains(thread, ":"):
		return "this conversation is with " + thread + ", not the owner"
	case len(thread) > 128 || strings.ContainsAny(thread, "/\\\x00\n"):
		return "the conversation's name is not one Link makes"
	}
	return ""
}

// Strangers reports whether thread is a stranger's: one named as its
// sender (<kind>:<name>; a webhook's is webhook:<name>).
func Strangers(thread string) bool { return strings.Contains(thread, ":") }

// Subagents reports whether thread is a subagent's (task-<id>).
func Subagents(thread string) bool { return strings.HasPrefix(thread, "task-") }
