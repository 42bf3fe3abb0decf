// Package scheduler is Link Scheduler, an agent's scheduler tool
// (scheduler-<agent id>): its MCP server (cmd/lnk-scheduler-tool serve,
// outside every sandbox) writes the agent's jobs, and its Runner, in the
// agent's supervisor, fires them through the agent's way in
// (services/wayin).
//
// # Calls
//
//   - add {text, in_minutes | at | cron}: a job sending text to the
//     calling conversation once, in N minutes or at a time ("YYYY-MM-DD
//     HH:MM" in the owner's time zone, or RFC 3339), or recurring (five
//     cron fields, in the owner's time zone); its firing is a message from
//     schedule:<id> at the call's hops and one.
//   - list, cancel {id}: only the calling conversation's jobs and its
//     subagents' (made in each task-<id> it started, and theirs).
//   - start_subagent {task, tools?, model?}: a subagent's start, a job
//     due now whose firing is a message from task-<id> into conversation
//     task-<id>, carrying its tools (the parent's, from _meta
//     link.local/tools, or the agent's whole list when it names none;
//     those the call names, never one the parent lacks) and its model
//     (the call's, if the parent's or one [model] allow names; else the
//     parent's, _meta link.local/model). Refused for an agent whose
//     harness is not Link Harness, which alone keeps such a list. Once
//     fired (taken or refused) the start fires no more and is kept 30
//     days as the record of whose subagent task-<id> is.
//
// # Jobs
//
// ~/Link/Agents/<agent>/Agent/schedule/<id>.json (0600, the folder
// 0700), one file a job, written whole by internal/ownerfile: {"id",
// "thread", "hops", "text", "at" | "cron", "next", "created", "last",
// "task", "retry"},
// times in UTC (RFC 3339). Whoever removes a job the runner may be
// firing (cancel, lnk agent chats delete's RemoveInto) holds the
// schedule's lock (Store.Lock, flock on the folder), which the runner
// holds from a job's reading to its writing back. Missed firings, and a firing not taken (by
// its class: ended, dropped, or tried again with a growing wait, kept
// in the job's "retry" so a restart waits it out): see [Runner.Fire].
//
// # Security
//
// The server holds the schedule folder and nothing else: it confines
// itself (landlock beneath that folder, and /etc/localtime read; seccomp
// with no exec and no socket) before it reads a call. The conversation
// and hops of a call come from the harness's _meta (internal/linkmeta),
// never from the model's arguments; a call naming no conversation, a
// stranger's conversation, or hops not a whole number is refused, as is
// a job whose firing would pass [tool.scheduler] hops. The runner trusts
// the job files (the owner's folder, which every sandbox hides) and
// hands each firing to the way in, which checks hops and per_day again.
// Cron lines and job files are parsed strictly (fuzzed).
package scheduler
