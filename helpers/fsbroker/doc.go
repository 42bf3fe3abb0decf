// Package fsbroker is lnk-fsbroker's protocol and request table: the
// process that holds an agent's folder handles and turns names beneath
// them into open files through the resolver (package resolve). Callers
// use its client, package fs; the kernel starts it with [fs.Start].
//
// # The conversation
//
// The kernel starts the broker with one end of a SOCK_SEQPACKET socket
// (internal/brokerproc) and sends, first and once, a hello: each root's
// name and right (read, or read and write), the root fds (O_PATH|
// O_DIRECTORY) beside it in SCM_RIGHTS. The broker reads that one record
// itself, confines itself (package confine) to exactly those folders,
// and only then answers the hello and serves the table: open (the fd
// goes back in SCM_RIGHTS, so file data never passes through the broker),
// write and replace (data inline up to [MaxInline], else in a memfd
// beside the record), mkdir, rename, remove, list and walk (entries come
// back in a sealed memfd, since a listing may be larger than a record),
// and stat. Refusals travel as codes (codes.go) that the client turns
// back into resolve's sentinels, so errors.Is works across the boundary.
//
// # Security
//
// Holds: the root fds of one hello, nothing else (fds 0–2 and the
// channel; a test reads /proc/<pid>/fd to prove it). May: what the
// resolver does beneath those folders, with the owner's uid; writes only
// beneath roots handed over writable (checked here, and by landlock).
// Trusts: the kernel, its only peer, for which folders it serves; no
// name, no request and nothing on disk beneath the roots. Refuses: any
// request before the hello or a second hello, an unknown type, a
// malformed or oversized record (each closes the channel); a name the
// resolver refuses; a write to a read-only root ([ErrReadOnly]); a root
// it was not handed ([ErrNoRoot]). Confined before it serves: landlock
// to its roots; seccomp refusing exec, every socket, ptrace and the rest
// of the common deny list. It links no net, net/http or os/exec
// (internal/repotest's budget). It refuses to serve where landlock or
// seccomp is missing.
package fsbroker
