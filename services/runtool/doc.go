// Package runtool is Link Run, an agent's run tool (run-<agent id>): an
// MCP server outside every sandbox (cmd/lnk-run-tool) whose calls each
// run in a sandbox of their own made from the agent's sandbox file, by
// the CLI's own path: `lnk sandbox run --agent NAME -- ARGV`, with the
// lnk beside it. It reads and runs nothing of the agent's itself: it
// starts those sandboxes, and reads back only the output files its own
// supervisors wrote (security.txt "Run and file").
//
// # Calls
//
//   - command {argv, folder}: one command to its end, or to [tool.run]
//     timeout less a tenth (2 min by default); its stdout and stderr kept
//     to [tool.run] output (64 KiB), the answer saying when cut. No
//     terminal and no stdin (/dev/null).
//   - start {argv, folder}: the same command in the background under a
//     supervisor of its own (`lnk-run-tool supervise`): at most [tool.run]
//     background at once (4), background_per_day starts a day (100, UTC
//     days), each for at most background_timeout (1 h), its output in
//     Home/background/<id>.out kept to background_output (1 MiB).
//   - list, read {id, offset}, stop {id}: only the background commands
//     the asking conversation started, as the harness names it in _meta
//     "link.local/thread"; a call naming none sees none.
//
// [commands] is checked here first, so the caller sees why a program is
// refused (with the lnk command that would allow it), and enforced by
// the sandbox; with "*" a program named by its path is left for the
// sandbox to find. The working folder is opened beneath the files folder
// through no link, and the sandbox starts in it by its descriptor.
//
// # Ending everything a call started
//
// lnk sandbox run leads a session, so a process group, of its own, and
// gets SIGKILL when the thread that started it ends (PR_SET_PDEATHSIG);
// inside, bubblewrap's pid namespace ends every process when its init
// goes. At the leader's exit (seen with waitid WNOWAIT, so it stays
// unreaped), at the timeout, on a stop or when the call is cancelled,
// the whole group gets SIGKILL before the leader is reaped: the group's
// ID cannot be another's by then.
//
// # Background records
//
// Outside the files folder, in ~/.lnk/agents/<agent id>/background/
// (0700, opened through no link by internal/ownerdir), each command has:
//
//   - <id>.json (0600, written atomically): its record, JSON:
//     {"id": 16 hex digits, "thread": the conversation, "argv": [...],
//     "folder": relative to Home, "state": "starting" | "running" |
//     "ended", "started": RFC 3339, "boot": /proc/sys/kernel/random/boot_id
//     when it started, "supervisor": {"pid", "start"}, "group": {"pid",
//     "start"} (the group's leader, whose pid is the group's ID; "start"
//     is /proc/PID/stat's start time in clock ticks), "timeout",
//     "ended", "reason": "exited" | "timeout" | "stopped" | "supervisor
//     ended" | "failed", "code": exit status (128+N for signal N, -1
//     unknown), "output": bytes printed, "cut": more than
//     background_output printed, "error", "told": when its ending reached
//     the agent}. Times are RFC 3339; zero times mean not yet.
//   - <id>.lock (0600, never replaced): its supervisor holds an exclusive
//     flock on it for its whole life. A record not ended whose lock is
//     free names a supervisor that is gone.
//   - <id>.ending.json (0600): its ending, for delivery to the agent as a
//     message from run:<id> through the agent's way in (services/wayin;
//     deliver.go, wayin.go):
//     {"from": "run:<id>", "thread", "ended", "reason", "code", "output":
//     "background/<id>.out", "bytes", "cut"}. It is written once, never
//     over one there, by whoever records the end; the deliverer calls
//     [Agent.MarkTold] once delivered, which records "told" and removes it.
//     Its supervisor delivers at its end, the server after each call,
//     and the agent's supervisor at each start ([Agent.DeliverToWayIn]);
//     one handed again after the harness took it (a deliverer cut short)
//     is answered 409 by Link Harness, and marked told.
//
// beside starts.json ({"day": "YYYY-MM-DD", "starts": N}) and .all.lock,
// which orders starts and sweeps. A record, its lock, its ending and its
// output go background_keep (24 h) after it ended and was told, and all
// of them on the agent's delete or move ([Agent.Forget]).
//
// A stop (run__stop, [Agent.StopAll] for the agent's stop, restart, move
// or delete) sends SIGTERM to the supervisor recorded, only when the
// process at its pid has the recorded start time on the same boot; the
// supervisor ends the whole group and records the end. A supervisor that
// dies however it dies (SIGKILL included) takes its sandbox with it
// (PR_SET_PDEATHSIG) and frees its lock; the next sweep (every start,
// list, read and stop) ends the record, killing what is left of the group
// only when it is surely the command's: the same boot, and its leader the
// one recorded (the same start time) or gone. A pid since reused by
// another process is never signalled.
//
// # Security
//
// Holds: for a call, the descriptors of its working folder and output
// pipe; for a background command, its lock, its output file and its
// folder, in its supervisor. No key: a sandbox's proxy secret is lnk
// sandbox run's.
//
// May do: start lnk sandbox run for its one agent; create, write and
// remove Home/background/<id>.out through no link (internal/resolve and
// internal/ownerfile); write its records in the agent's background folder
// outside Home; signal its own supervisors and the process groups its
// records surely name.
//
// Trusts: the owner's settings (the agent's sandbox file, compiled by
// caps at each call), and the harness for the conversation it names (a
// harness that runs what the model writes could name another, bounded
// then by background_per_day). Nothing in the files folder: its output
// files are read through no link, only when regular with one name, and
// capped.
//
// Refuses: a program [commands] does not name, a working folder through
// a link or outside the files folder, malformed arguments (an unknown
// field, a key twice), a start past the limits or naming no conversation,
// and a stop, read or list of another conversation's command.
// Each refusal's error result carries _meta link.local/refused with its
// reason (internal/toolrefusal), so the tool bridge logs the call in the
// audit log as refused, once.
package runtool
