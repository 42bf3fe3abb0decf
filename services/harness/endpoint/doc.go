// Package endpoint is Link Harness's HTTP endpoint on 127.0.0.1:$LNK_PORT:
// the owner's client (lnk agent chat/send) and Link's bridge talk to the
// agent through it.
//
// On one keep-alive connection the caller first sends POST /link/proof
// with a random 32-byte challenge (hex) and Link-Agent / Link-Agent-Id;
// the harness answers HMAC(key, agent ID ‖ owner ‖ "endpoint" ‖
// challenge) (helpers/keybroker/proof). The caller checks it and only
// then sends POST /link/message with the key (Authorization: Bearer),
// Link-Agent, Link-Agent-Id, optionally Link-From (with Link-Hops, its
// hop count, which the turn sends on in every call's _meta; with a
// Link-From of task-<id> into that conversation, a subagent's start's
// Link-Tools, a JSON array of its tools' names, and Link-Model), and a body
// {"thread": …, "text": …[, "new": true]} ("new": the owner's message
// starts the conversation); the answer streams back as newline-delimited
// JSON: {"text": delta} …, then {"done": true, "seq": N} or
// {"error": "…"}.
//
// # Security
//
// It listens on 127.0.0.1 only. It holds each agent's key (Agent) and
// nothing else secret. A request naming an agent it doesn't serve is
// refused before any key is checked; a key is compared in constant time
// against the named agent's alone; a name two owners' agents share, given
// without an ID, is 409; an ID and name that disagree 404; an agent with
// no key 503 for every request. Everything is keyed by the agent's ID and
// owner, never its name. A thread's name is checked by store.CheckThread;
// an owner's message over 16 KiB, another's over 1 MiB (a webhook
// post's cap), a Link-From naming no sender, a Link-Hops without one or
// not a decimal 0..1024, a second message from a sender who speaks once
// (run:<id>: 409, Agent.Taken), and a body that isn't exactly
// {"thread","text"[,"new"]} are refused. A message into a conversation
// the harness's store doesn't keep (Agent.Has) is 404 with the rule
// no-conversation (Event.Rule) unless it may start it
// (conversation.MayStart: main, made at need; the owner's with "new",
// 409 where one is kept; a subagent's start, a stranger's or teammate's
// own); what the store can't say is 503. One turn runs per
// thread at a time; a second message waits its turn, but for a message
// from others (not a subagent's start nor run:<id>) when the agent has
// an inbox (Agent.Queue): then, while the thread is in a turn or has
// messages waiting, it is kept on the disk and answered taken at once,
// {"queued": true, "done": true}, and run after them (queue.go); a
// refusal to keep it is 503. A message from others' turn, taken at once
// or queued, runs at most OthersTurnLimit (Agent.TurnLimit), then is
// ended with an error saying so. The client's refusal (RefusedError) is
// internal/refusal's shape, errors.As finds it; a 503 or 429 is
// refusal.ErrBusy, a refusal for now. Every refusal is
// logged once, with its reason, never with the key or the message.
package endpoint
