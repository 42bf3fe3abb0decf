// Package memory is Link Memory's engine: for each sandboxed agent an
// index (SQLite with FTS5, through the cgo-free ncruces driver) of what
// the agent may search — its Home's memory/ folder and its own
// conversations (Agent/chats/<thread>/conversation.md) — and the four
// calls its MCP server answers: search, read, list and remember.
//
// # Security
//
// Holds, for each agent it serves, a handle on that agent's Home and
// own folder, and its index. Reads only Home's memory/ and chats/*/
// conversation.md, every name opened from its folder's handle through
// internal/ownerfile (O_NOFOLLOW, never a link, never a hidden name,
// regular files of the owner's only, at most 1 MiB each). read serves
// only the copy the index holds; remember writes only Agent/memory/
// notes.md, atomically, at most 4 KB, and only in a conversation of the
// owner's as the harness names it (_meta link.local/thread). The index
// is opened in SQLite's defensive mode with its schema untrusted, and
// one whose schema is not exactly Link's is refused. Trusts the harness
// for the conversation a call names; nothing it reads.
package memory
