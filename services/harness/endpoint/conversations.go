package endpoint

import (
	"fmt"
	"strings"
)

// Whose a conversation is, by its name: the one rule the endpoint, the
// agent's way in (services/wayin) and lnk agent send share.
const (
	webhookThread  = "webhook:"  // a webhook's posts: webhook:<name>
	strangerThread = "stranger:" // a stranger's own
	subagentThread = "task-"     // a subagent's: task-<id>
)

// StrangersThread reports whether thread is a stranger's conversation:
// a webhook's (webhook:<name>) or another stranger's (stranger:<…>).
func StrangersThread(thread string) bool {
	return strings.HasPrefix(thread, webhookThread) || strings.HasPrefix(thread, strangerThread)
}

// SubagentsThread reports whether thread is a subagent's (task-<id>).
func SubagentsThread(thread string) bool {
	return strings.HasPrefix(thread, subagentThread)
}

// CheckOwnersThread refuses, for an owner's message, a conversation that
// is not the owner's own: a stranger's, whose history holds what the
// stranger wrote, where an owner's turn would run with every tool the
// agent has; or a subagent's, whose tools were narrowed to its parent's.
func CheckOwnersThread(thread string) error {
	switch {
	case StrangersThread(thread):
		return fmt.Errorf("conversation %s is a stranger's: the owner's messages go only to the owner's own conversations", thread)
	case SubagentsThread(thread):
		return fmt.Errorf("conversation %s is a subagent's: the owner's messages go only to the owner's own conversations", thread)
	}
	return nil
}
