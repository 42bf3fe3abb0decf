// Package serve runs Link Harness from its config.json: for each agent it
// answers (one, or an owner's agents in the shared harness), it opens the
// agent's Agent/ folder never through a link, and makes its model client
// (services/harness/model, its fallback), its tools (services/harness/
// tools, through $LNK_TOOL_ routes), its prompt (services/harness/prompt)
// and its turn runner (services/harness/turn); a message's conversation
// is opened from the agent's chats/ (services/harness/store) for its turn
// and closed after. The endpoint (services/harness/endpoint) listens on
// 127.0.0.1 at the config's port.
//
// # Security
//
// Holds each agent's endpoint key, its folders' handles and its tools'
// sessions, nothing else: the model's key behind the proxy is a
// placeholder. Every agent's things are its own: its own folder handle,
// chats, prompt source, tool set and runner, chosen by the endpoint from
// the request's ID, owner and key, never its name. A config that names a
// port other than $LNK_PORT, or an Agent/ folder that is a link, not the
// owner's or open to others, is refused; each refusal is said once on
// stderr, which the agent's supervisor appends to its log. A turn in a
// subagent's conversation (task-<id>) is offered only the tools that
// conversation keeps, on the model it keeps (subagent.go): kept at its
// start, narrowed by any later list, never widened; one keeping none, or
// a model outside the agent's own and [model] allow, runs no turn, and a
// start refused so is refused before its conversation's folder is made,
// so nothing is kept that later messages would be taken into. A queued
// message from others runs once (inbox.go; its check reads only the
// events since its last look, ranindex.go), within the limit a turn of
// others' message taken at once has (endpoint.OthersTurnLimit).
package serve
