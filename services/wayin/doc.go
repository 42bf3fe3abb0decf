// Package wayin is an agent's way in: the one door by which a message
// from others (a schedule's firing, a subagent's task, a background
// command's ending, a webhook's post) reaches the agent's harness. It
// runs outside every sandbox, in the agent's supervisor (services/
// agentlife), for the agent's life, and hands each message to Link
// Harness's endpoint through endpoint.Client with Link-From and
// Link-Hops set; the harness keeps it as from them, quoted line by line,
// the model told who speaks.
//
// # The socket
//
// ~/.lnk/agents/<agent>/wayin.sock (0600, in the agent's settings folder,
// 0700, which no sandbox sees). One message per connection:
//
//	way in → {"challenge": 32 bytes hex}\n
//	caller → {"agent_id", "answer", "from", "thread", "text", "hops"[, "task"]}\n
//	way in → {"taken": true[, "again": true]}\n or {"error", "hint"}\n
//
// "answer" is helpers/keybroker/proof's HMAC over the challenge with the
// way in's key (wayin.key beside the socket, 0600, made fresh at each
// start of the agent) in the context {agent ID, owner, "wayin"}: the
// call is proved as the agent, with the same scheme the endpoint's
// proof uses. "again" says the harness had taken that message already
// (a background command's ending, which speaks once). "task" is a
// subagent's start's {"parent", "tools", "model"}: only a task-<id>
// message carries one, and it must (a list, never null, each tool's
// and the model's name by internal/toolname's rule, the one the harness
// checks them by); the way in hands the list and model on (Link-Tools,
// Link-Model), gathers the
// subagent's answer, and hands it, or why the subagent never ran (the
// way in's caps, or the harness's refusal by a rule before it took the
// start: never one for now, which is handed again), to the parent
// conversation as a message from task-<id>, once.
//
// # Security
//
// Takes: the owner's own processes alone, by the kernel's rule for its
// clients (internal/peercred's OwnersOwn: SO_PEERCRED's uid the owner's,
// and not a process Link confined, under a seccomp filter with
// no_new_privs, as every broker, proxy and sandboxed command is; a peer
// whose confinement can't be read is refused), proved with the agent's
// way-in key: the agent's supervisor (its scheduler's firings), the run
// tool, the webhook listener (lnk agent webhook serve). At most 64 messages at
// once (the 65th is refused at once, never queued: the spec's "at most
// 64 at once", and its caller, a scheduler or deliverer, tries again);
// a request line read within 10 s, its text at most the harness's
// endpoint.MaxOthersMessage (1 MiB, a webhook's body cap).
//
// Refuses, each logged once with its reason: a Link-From naming no
// sender or one the way in doesn't hand (a teammate's or a team's until
// Teams is built; a stranger other than a webhook's); a stranger's
// message for any conversation but its own (webhook:<name>); a
// subagent's for any but task-<id>; hops past [tool.scheduler] hops
// (Link's 8); a schedule's or subagent's message past [tool.scheduler]
// per_day a day (UTC), counted in wayin-day.json (0600, written whole);
// a subagent's past [tool.scheduler] subagents at once. The limits are
// the agent's compiled grants, read at each message; what can't be read
// refuses. The harness's own refusal of a message into a conversation it
// doesn't keep (deleted since) comes back as a refusal with its rule
// (conversation.ErrMissing) and a hint naming lnk agent send --new; the
// in-process Hand leaves its logging to its caller (the scheduler's
// runner), so it is said once.
//
// Holds: the agent's endpoint key (bridge.json's) to hand messages on,
// and its way-in key. Trusts: the harness's endpoint once it proved it
// holds the endpoint key (endpoint.Client checks), and the owner's
// settings.
package wayin
