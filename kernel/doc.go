// Package kernel is Link's core: one process per owner (uid) that holds
// the root folder handles, the capability table and the audit log, starts
// the brokers, and answers the lnk CLI and services on a unix socket.
//
// # Lifecycle
//
// [Run] opens the roots, takes ~/.lnk/run/kernel.lock (flock: one kernel
// per uid; a kernel killed with -9 releases it), replaces a stale socket
// left by a dead kernel (only a socket of this uid, never a link or a
// file), listens, and serves until SIGTERM, SIGINT, a stop request or its
// context ends. Stopping is in order: no new connection is accepted; every
// connection is shut for reading, so what a peer sent before is still
// read and answered "stopping", and a request already being handled
// finishes and its answer is written before its connection closes (bounded
// by [Options].Drain); then the brokers are stopped, the socket removed
// and the audit log closed. Each connection is served by internal/wire's
// one record server, the one every broker uses, and the drain is its
// [wire.Server.Drain].
//
// # Security
//
// It holds: O_PATH|O_DIRECTORY|O_NOFOLLOW handles of ~/.lnk, ~/.lnk/run,
// ~/.lnk/log, ~/Link and ~/Link/Agents, and of each granted folder of a
// running start; the capability table (128-bit random handle → folder
// handle, rights, agent, start); the audit log; one channel per broker;
// for each start it compiled, its proxy's socket and the run's lifeline
// (start_brokers.go). It is undumpable.
//
// It may: append to the audit log; create ~/.lnk and its run and log
// folders (0700); bind its socket (0600, in a 0700 folder); remove that
// socket, or a stale one of this uid's; start its brokers as children:
// the kernel-wide key broker, and each start's file broker, proxy (with
// the key broker of its sealed secrets), ask broker (with its dialog
// launcher) and tool bridge (lnk-toolbridge, start_bridge.go), stopped
// when the start ends; a start's broker that dies ends its start closed;
// start the tools' servers a start's bridge asks for, outside every
// sandbox as their definitions say, through the one launcher lnk kernel
// run wires in (Options.Tools), only for a tool the start's compiled
// grants name, and kill each one's process group once the bridge lets it
// go or dies (bridge_tools.go).
//
// It trusts: only connections whose SO_PEERCRED uid is its own, from
// the owner's own clients. Another uid's connection is refused and logged
// before a byte is read, and so is one from a process Link confined
// (under a seccomp filter with no_new_privs, as every broker, proxy and
// sandboxed command is), from a process the kernel started or one below
// it, or from a peer whose confinement cannot be learned (peer.go). A
// start is its connection's: only that connection ends it, and it is
// revoked when the connection closes. A start's tool bridge is served on
// its own channel, through a table of its two requests alone, each read
// strictly. Within a
// connection it trusts no record: a malformed, truncated or oversized
// record, an unknown type, a type not permitted now, or a wrong fd count
// closes the connection and is logged; a handle that does not exist, was
// revoked at its start's end, or is another agent's is refused (a
// [Refusal], Link's one refusal shape, internal/refusal) and logged.
//
// It refuses a root that is a link, is another uid's, or is looser than
// the spec's mode (~/.lnk and its folders 0700; ~/Link and ~/Link/Agents
// writable by the owner alone).
// A start's folder that is reached through a link, or that is or
// holds ~/.lnk (HOME, /), lies inside it, holds ~/Link/Agents, is another
// agent's folder or inside one, or lies in ~/Link/History is refused: by
// its path, then by the opened folder itself (folders.go). One exception:
// a read-only folder of the kernel's own compile that holds ~/.lnk or
// ~/Link/Agents, which that compile says the sandbox hides (--read '~'),
// is a bind-only capability (bindonly.go): handed to the start's sandbox,
// and never read, written or served by the kernel or a broker.
//
// A start's sandbox (lnk sandbox run --agent) is bound from the folder
// handles the kernel hands its connection (open-folder); lnk hands the
// kernel bubblewrap's pidfd (attach, a live child of lnk's only), and the
// kernel kills the sandbox through it when the start ends: lnk kernel end
// AGENT (end-agent), the connection's end, the kernel's stop. A watch
// answers lnk then, which kills it too; lnk kills it as well if the
// kernel's connection ends (handlers_sandbox.go, sandboxes.go).
//
// The audit log gets one line per grant, revocation, capability use,
// refusal (with its reason) and broker restart; never a file's contents,
// a path asked for inside a granted folder, an answer or a secret.
package kernel
