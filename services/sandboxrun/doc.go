// Package sandboxrun is the one orchestrator of a command's run in an
// agent's sandbox, called in-process by `lnk sandbox run --agent` (cli)
// and by the long-lived run tool (services/runtool), so a run tool call
// pays no start of lnk: it asks the kernel (kernel/client) for the
// agent's start, the kernel compiling the grants itself, and takes each
// granted folder as the kernel's O_PATH handle over SCM_RIGHTS (checked
// against the caller's own compile); has the kernel start the run's
// brokers as its children (the proxy with the key broker of its sealed
// secrets, the ask broker), taking only their channels; builds
// bubblewrap's arguments (kernel/sandbox) and runs bubblewrap and
// lnk-init; hands the kernel bubblewrap's pidfd and holds the kernel's
// watch, so the kernel ending the start, or its connection ending,
// kills the sandbox at once; and ends the start when the sandbox has
// ended, the kernel revoking what it granted.
//
// # Security
//
// Holds: for a run's length, the kernel's connection, the folders'
// handles until bubblewrap has them, the proxy's relay channel and what
// the sandbox is told of its proxy (its secret, sealed secrets'
// placeholders). A caller holding these keeps itself undumpable.
//
// May do: start bubblewrap (with PR_SET_PDEATHSIG, and for a session's
// caller its own process group, killed before its leader is reaped),
// write refusals and notices to the audit log.
//
// Trusts: the kernel, for what it grants and ends.
//
// Refuses: a start whose grants the kernel compiled differently
// (ErrGrantsChanged), a sandbox this machine cannot build, sealed
// secrets with no proxy to add them; each logged once.
package sandboxrun
