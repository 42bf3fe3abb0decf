package conversation

import (
	"strings"

	"lnk.dev/lnk/internal/refusal"
)

// Main is the owner's default conversation: always there, made by the
// first message that needs it.
const Main = "main"

// Rules of a message refused for its conversation being, or not being,
// kept already (Link Harness's endpoint refuses; the command line, the
// way in and the scheduler tell them apart by these).
const (
	RuleMissing = "no-conversation"
	RuleExists  = "conversation-exists"
)

// ErrMissing and ErrExists are the rules' sentinels (errors.Is).
var (
	ErrMissing = refusal.Sentinel(RuleMissing, "the conversation doesn't exist")
	ErrExists  = refusal.Sentinel(RuleExists, "the conversation exists already")
)

// MayStart reports whether a message may start conversation thread when
// it isn't kept: Main, by anyone who may write it; the owner's message
// that says it starts one (asNew, lnk agent send --new); a subagent's
// start (subagentStart: its tool list, into its own task-<id>); a
// stranger's message into the conversation named as it (stranger:<kind>:
// <name> into <kind>:<name>); a teammate's or a team's into its own
// (agent-<id>, team-<id>). Anything else (a schedule's firing, a
// background command's ending, a subagent's answer to its parent, an
// owner's message naming a conversation) goes only where a conversation
// is kept: one deleted since is refused, never made anew.
func MayStart(from, thread string, subagentStart, asNew bool) bool {
	switch {
	case thread == Main:
		return true
	case from == "":
		return asNew
	case subagentStart:
		return Subagents(thread) && thread == from
	case strings.HasPrefix(from, "stranger:"):
		return thread == strings.TrimPrefix(from, "stranger:") && Strangers(thread)
	case strings.HasPrefix(from, "agent-"), strings.HasPrefix(from, "team-"):
		return thread == from
	}
	return false
}
