// Package agentlife runs an agent: its supervisor (lnk agent supervise,
// what lnk agent start starts in the background, in the terminal with
// --foreground, or as the systemd user unit lnk-agent-<agent id>.service),
// the harness's log, the agent's block of ports, and the supervisor's
// record that lnk agent status and stop read.
//
// The supervisor starts the harness (agent.toml's [start] command) through
// `lnk sandbox run --agent NAME -- COMMAND`, the one path every sandbox of
// an agent takes, or, with the agent's sandbox off (no_sandbox = true,
// written only by lnk agent start --no-sandbox), as the owner's plain
// process. The harness leads a process group of its own, with
// PR_SET_PDEATHSIG: a supervisor killed however it dies takes the
// sandbox with it (bubblewrap's PID namespace ends with its first
// process, and the kernel's record of the start with the connection of
// the lnk that made it). It is restarted when it fails, after 1 s,
// doubling to 1 minute, back to 1 s once it has run a minute; an exit of
// 0 ends the supervisor. An agent on Link Harness with webhooks has its
// webhook listener (lnk agent webhook serve, outside the sandbox) started
// with each start of the harness, in its process group, and stopped
// before it; the record names its port (lnk agent status shows it).
//
// Files, all the owner's (0600 in 0700 folders under ~/.lnk, opened
// through internal/ownerdir and internal/ownerfile, never through a link,
// each written atomically):
//
//   - ~/.lnk/agents/<agent id>/supervisor.json: the record (Record).
//   - ~/.lnk/agents/<agent id>/supervisor.lock: held (flock) by the
//     running supervisor for its whole life: the agent runs exactly when
//     it is held, whatever became of the pid the record names.
//   - ~/.lnk/agents/<agent>/logs/<name>.log: the harness's stdout and
//     stderr, appended by the supervisor from outside the sandbox (name:
//     the harness's, "harness" when the agent names none); a log that is
//     not a regular file is refused. At MaxLog (16 MiB) it is renamed to
//     <name>.log.1, replacing the one before, and begun anew (rotate.go),
//     whoever's line reaches it: the harness's output or the
//     supervisor's own (appendLine, log.go).
//   - ~/.lnk/agents/<agent>/logs/<name>.start: the log's size in bytes, in
//     decimal, when the latest start began: where lnk agent logs begins;
//     after "1:" once the log was rotated since, an offset in
//     <name>.log.1.
//   - ~/.lnk/agents/.ports.lock: held while a block of ports is chosen.
//
// # Security
//
// The supervisor runs as the owner, outside every sandbox. It holds its
// lock, the log's descriptor and its harness's process group; it may
// start the harness (only through lnk sandbox run unless the owner turned
// the sandbox off, which ~/.lnk/machine.toml's unsandboxed = false
// refuses), signal that group, and write its own files above. It trusts
// agent.toml (the owner's, out of every sandbox's reach) and nothing the
// harness prints: the output goes to the log as bytes, and the start
// offset is lnk's own count, never a marker.
//
// For Link Harness it also serves, for its whole life, the agent's way
// in (services/wayin: ~/.lnk/agents/<agent>/wayin.sock and wayin.key,
// 0600, removed at its stop), the runner that fires the agent's jobs
// (services/scheduler) through it, and the delivery of background
// commands' endings left untold (wayin.go).
package agentlife
