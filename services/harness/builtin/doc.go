// Package builtin is Link's built-in model: a small, deterministic,
// rule-based model that speaks OpenAI's chat-completions format, so an
// agent runs whole turns on a machine with no model and no network
// (security.txt "A local model"; issue #25 "A model for a machine with
// none"). `lnk model builtin` serves [Handler] on 127.0.0.1; tests use it
// in-process.
//
// # The wire
//
// POST /v1/chat/completions answers as OpenAI does: one JSON
// chat.completion, or with "stream": true server-sent events, one
// chat.completion.chunk per "data:" line (the role first, text deltas,
// tool calls as indexed deltas, a last chunk with finish_reason and,
// when stream_options.include_usage asks, one with usage), then
// "data: [DONE]". POST /v1/embeddings answers OpenAI's list of
// embeddings with [Embed]'s vectors (a hashed bag of words and word
// pieces, for machines with no model and for tests: Link Memory's search
// by meaning uses it there). GET /v1/models lists the one model. Errors carry
// OpenAI's body {"error": {"message", "type", "param", "code"}}: a body
// past [MaxBody] is 413, one that isn't a JSON request 400, an unknown
// path 404, a wrong method 405.
//
// # Rules
//
// It reads the last owner ("user") message, or, when [Options.Obedient],
// the last instruction found anywhere in its context (the system prompt,
// every message, tool answers included), and answers:
//
//   - "run <command line>" → run__command {"argv": words}, the line split
//     as a shell would, without expansion; "start <command line>" →
//     run__start;
//   - "read <path>" → file__read; "write a note to <path>" and
//     "write <text> to <path>" → file__write; "list files [in <folder>]"
//     → file__list; "remember <text>" → memory__remember; "search
//     <words>" and "what do you know about <words>" → memory__search;
//     "remind me in N minutes [to] <text>" → scheduler__add {"text",
//     "in_minutes": N}; "subagent [with tools a, b | with no tools]:
//     <task>" → scheduler__start_subagent {"task"[, "tools"]};
//   - a subagent's task (a message from task-<id>, quoted as the harness
//     quotes others) is read as its instructions, its lines unquoted; a
//     schedule's, a command's or a stranger's message stays words;
//   - after a tool's answer: words quoting its first lines ("run
//     answered: …");
//   - anything else: a fixed answer echoing the message's first line.
//
// A call is made only to a tool the request offers (and its tool_choice
// leaves), with arguments its schema accepts; a call it would make to
// anything else is an answer in words saying it has no such tool. Usage
// is estimated (about four bytes a token); an answer in words past
// max_tokens is cut there, finish "length".
//
// Obedient, it reads each line of at most 4 KiB, and at most 16 MiB of a
// request in all (counted, never timed), so no context makes it slow and
// the same request still gets the same answer.
//
// # Determinism
//
// The same request gives the same bytes: ids (chatcmpl-…, call_…) and
// "created" come from a SHA-256 of the request body, never the clock or
// a random source.
//
// # Security
//
// It holds nothing and reaches nothing: no file, no network, no process.
// It trusts no byte of a request: the body is read to [MaxBody] at most
// and decoded strictly into the fields it knows. Each request refused
// is logged once ([Options.Logf]) with its status and why, never a word
// of its messages. Obedient mode is the
// worst case of a model steered by what it reads, there so tests can
// show what Link still refuses when the model is fully hijacked; it is
// never a default.
package builtin
