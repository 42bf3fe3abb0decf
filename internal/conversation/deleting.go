package conversation

import "strings"

// DeletingPrefix names a conversation's folder being deleted
// (chats/.~deleting~<thread>): moved aside under it in one rename, then
// removed. Two '~' keep it from every conversation's name and its
// leading '.' from memory's walk; what a delete cut short leaves under
// it is no conversation: never listed, opened, backed up or moved, and
// removed at the agent's next start.
const DeletingPrefix = ".~deleting~"

// IsDeleting says whether name, an entry of chats/, is a conversation
// being deleted (or what a delete cut short left).
func IsDeleting(name string) bool { return strings.HasPrefix(name, DeletingPrefix) }
