// Package filetool is lnk-file-tool's server (cmd/lnk-file-serve, what
// `lnk-file-tool serve` becomes): Link File, an MCP server
// over stdio that reads and writes an agent's files with the calls read
// (paging from a line), write, replace, find and list ([NewServer]).
//
// It touches no file itself. At the first call it starts its command
// ([Sandboxed]) — Link makes it `lnk sandbox run` with the agent's
// sandbox flags, then `lnk-file-tool apply --files … --agent-folder …
// --write …` (package apply) — and keeps it for the session: each call a
// JSON line on its stdin, {"name", "arguments"}, each answer a line back,
// {"ok": …} or {"error": "…"}. One that ends is started again at the next
// call; one that never starts is reported with what it wrote on stderr.
//
// --no-find leaves find out of what it lists, says and answers;
// --no-diffs does the same for each write's and replace's diff ([Offer]).
// With --agent NAME the command is `lnk sandbox file --agent NAME`, the
// agent's grants narrowed to its files (package grants).
//
// # Speed
//
// A call's cost is mostly hops between processes, so serve keeps each
// hop to one thread wake-up: it runs on one P, and its pipes — to the
// client and to the sandboxed process — are non-blocking, waited on in
// the runtime's poller and read and written with raw system calls
// ([stdpipe.Pipe]), never a thread blocked in read that the runtime's monitor
// polls. An answer line is checked in one pass (one JSON value after
// {"ok": and nothing more) instead of through the decoder. Its MCP
// transport is Link's own ([mcpstdio.Transport], Link Web's too): each client line decoded once
// by the go-sdk's decoder, where the go-sdk's stdio transport scans it
// three times and hands it across a goroutine; each result the server
// encoded written as it is, framed, not compacted again; one write a
// message. A tool's result of one text is encoded in one pass
// ([mcptext.Result]), not compacted twice over as the go-sdk's encoding
// does, to the same bytes. A plain tools/call in an initialized session
// — the message a session sends over and over — is answered on that
// transport without the go-sdk server ([fastCalls]), which decodes it
// four times, each with a 32 KiB buffer of its own, and encodes its
// result again with reflection; its bytes are the go-sdk's
// (TestFastCallsAreTheGoSDKs). The go-sdk server (initialize, every
// other message and any call the fast path is not sure of) is kept: it
// is the protocol's reference.
//
// # Security
//
// Holds: the sandboxed process's stdin, stdout and stderr, and the
// session's versions (the version of each file its answers gave, by path,
// handed to a process started again before its first call: [seen]);
// nothing else, no file, folder or key of the agent's. It sets its own ends of its
// pipes non-blocking (the open file at its end only; a terminal or file
// on its stdin or stdout is left as it is).
//
// May do: start its one command (Link's `lnk sandbox run …`), again when
// it ended, and kill it and its process group at the session's end.
//
// Trusts: its command line (Link's). Not the MCP client (the agent's
// harness): a line past 16 MiB, a JSON-RPC batch or a line that is not
// one message ends the session; a plain tools/call is matched strictly
// by serve's own code (any near miss goes to the go-sdk); its arguments
// pass to the sandboxed process checked only to be JSON (apply decodes
// them strictly: a key twice or in another case is refused), whose answers
// pass back unread but for the --no-diffs fields. Not the
// sandboxed process: an answer line past 8 MiB, or not strictly {"ok"}
// or {"error"} (wire.Unmarshal's rules), ends it. A client that closes
// its side still gets the answer to each call it sent first
// ([drainTransport]).
//
// Refuses: a call it does not offer (find under --no-find), before the
// sandbox sees it.
package filetool
