package endpoint

import (
	"errors"

	"lnk.dev/lnk/internal/conversation"
)

// CheckOwnersThread refuses, for an owner's message, a conversation that
// is not the owner's own (internal/conversation, the one rule): a
// stranger's, whose history holds what the stranger wrote, where an
// owner's turn would run with every tool the agent has; a teammate's or
// a team's; or a subagent's, whose tools were narrowed to its parent's.
func CheckOwnersThread(thread string) error {
	if why := conversation.NotOwners(thread); why != "" {
		return errors.New("the owner's messages go only to the owner's own conversations: " + why)
	}
	return nil
}
