// Package tools is Link Harness's side of its tools: which tools it may
// call, what they offer the model, and the MCP sessions its turns call
// them through (security.txt "Link Harness").
//
// # Where tools are
//
// Only where the harness's environment names them: each tool of its
// config is the URL in its $LNK_TOOL_<NAME> variable, the proxy's tool
// route on the sandbox's loopback, reached with the go-sdk's Streamable
// HTTP client through $HTTP_PROXY. A URL a model or a tool gives is never
// called; a variable that names anything but an http:// URL on loopback
// is refused. Link's own tools, run-<id>, file-<id>, memory-<id> and
// scheduler-<id> of this agent, are offered as run, file, memory and
// scheduler.
//
// # Sessions
//
// A turn opens a session with a tool only when the model calls it, and
// ends every one it opened when it ends ([Turn.End]), so nothing one
// conversation left in a tool is there for another's. Memory's alone is
// kept for the turns after, one for every conversation, and ended once no
// turn used it for 10 minutes, an hour after it started, or at once after
// a call to it failed other than with the tool's own error.
//
// Listing a tool's calls needs a session too. A list is not a call: it
// carries nothing of any conversation and the same list is offered to
// all of them, so it is made in a session of its own, ended as soon as
// the list is read, and kept (the one thing kept besides memory's
// session) for [Settings.ListEvery] before the tool is listed again.
//
// # Starting and listing
//
// A tool that fails to start or list, or takes over 30 s to, is left out
// of the turn and, if it never listed, of every turn for 5 minutes. One
// that listed before is offered what it listed. One that lists more than
// 16 pages, or a page (a cursor) twice, is offered what it listed by then.
//
// # Offers
//
// At most 128 calls of each tool, 2 KiB of each description (the rest
// cut), a schema of at most 16 KiB, and 128 KiB for every call together
// (Link's own tools counted first): a call past a limit is left out, and
// each cut said in the log. A call is offered as <tool>__<call>, a name a
// provider takes ([A-Za-z0-9_-], at most 64): one longer, or with another
// character, is left out, never cut or changed. A tool whose name holds
// "--" or "__", or ends with "-" or "_", isn't offered, so the first "__"
// of an offered name always ends its tool's name and no tool can take
// another's call's name; of two calls whose names come out the same, the
// first is offered.
//
// # Calls
//
// A call to a name not offered in the turn is answered to the model as an
// error and sent nowhere. Every call carries, in _meta, the conversation
// (link.local/thread), its hops (link.local/hops) and its tools
// (link.local/tools). An answer's body is read to [MaxBody] at most.
//
// # Security
//
// Holds: the list of each tool's calls, memory's session, and for the
// length of a turn the sessions it opened.
//
// Never says: a tool's URL, whose path holds the bridge's route secret:
// an error quoting it has it taken out before the log or the model sees
// it.
//
// Trusts: nothing a tool sends: its names, descriptions and schemas are
// checked and capped before a model sees them (FuzzOffers), its answers
// are the tool's words.
package tools
