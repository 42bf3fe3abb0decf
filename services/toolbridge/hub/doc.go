// Package hub runs one shared tool's server for every session of every
// sandbox naming it (tools-and-asking.txt "A shared tool" through "Its
// log"): one process outside every sandbox, on a unix socket in Link's
// settings, ~/.lnk/sandbox/tools/<name>-<key>.sock (0600), that no
// sandbox reaches. Each connection to the socket is one session, speaking
// newline-delimited JSON-RPC.
//
// The hub rewrites every request's id (and progress token) to one of its
// own and puts the session's back on the answer, so an answer reaches only
// the session that asked. Each session's answers are written by a
// goroutine of its own; a session with 64 answers unread is ended. A
// list_changed notification goes to every session, progress only to the
// request that asked; a repeated initialize is answered from the first
// one's result; a ping is answered by the hub. What the hub writes to the
// server is written apart from what reads the server.
//
// # Security
//
// Holds: the tool's definition (its --env values handed to the server
// alone, in its environment), the machine's hub key (sandbox/tools/.key,
// 0600, made once), and the server's process group, in a PID namespace of
// its own where the kernel allows one, so a hub that dies leaves nothing
// behind. May: start that one server, listen on its one socket. Trusts:
// the owner's definition and the bridge that hands it --dir. Refuses: a
// --dir that is a link or not the user's alone, a key that no longer
// names what the tool runs as (the tool was defined again), a second hub
// on one socket (a lock beside it), a line over the bridge's cap, and a
// message that isn't valid JSON or names a member twice or in another
// case (an "id" beside an "ID"), so the hub and a peer never read two
// different ids from one line. Ids are rewritten by splicing the line,
// never by decoding and encoding a result again.
// Never trusts: a session's messages or the server's answers, which are
// routed, never interpreted beyond ids and tokens.
package hub
