// Package sandbox builds and runs Link's sandbox: bubblewrap for the
// namespaces and the mounts, then lnk-init (internal/initstage) inside
// for landlock, seccomp and NO_NEW_PRIVS, then the command.
//
// Build turns a caps.Compiled (the grants, checked) into a Sandbox: the
// bubblewrap arguments, the fds bubblewrap binds from, and the plan
// lnk-init enforces. Exec replaces the calling process with bubblewrap
// (the cheapest shape: no Link process waits beside the command); Start
// runs it as a child, for callers that wait, forward signals or report
// the sandbox's pid (--json-status).
//
// What the command gets:
//   - new user, pid, ipc, uts and cgroup namespaces, and a network
//     namespace with only loopback unless [network] mode = "host";
//     --die-with-parent, --new-session; a fresh /proc, a minimal /dev,
//     its own /tmp; where lnk waits beside it (Start), a lifeline pipe
//     whose write end lnk alone holds, so lnk SIGKILLed mid-start leaves
//     nothing running once lnk-init has started (initstage);
//   - the system folders read-only (/usr, /lib*, /bin, /sbin and a fixed
//     list of /etc entries: never /etc/shadow; a regular file or a small
//     folder among them copied at start, a larger folder bound:
//     system.go), and the sandbox's own root, where the copies live,
//     remounted read-only after every other mount; the granted folders
//     bound read-only or read-write from fds: an agent's, the kernel's
//     own handles (Options.Held, each checked against caps' device and
//     inode); otherwise opened without following any link (openat2
//     RESOLVE_NO_SYMLINKS), so a link swapped in after caps checked the
//     path is refused, never followed; the hidden paths
//     (~/.lnk, other agents' folders, ~/Link/History, ~/Link/Teams)
//     covered with an empty read-only tmpfs where a grant would show
//     them; the read-only paths at the top of written folders (.git,
//     .envrc, .vscode, .idea) bound read-only over themselves, an absent
//     one made empty first (readonly.go), so none can be created; those
//     caps found below the top (Compiled.NestedReadOnly) bound read-only
//     and the folders holding them (Compiled.Pinned) over themselves, so
//     none can be moved aside, each only if still the device and inode
//     caps recorded (nested.go);
//   - /tmp, /dev and every granted folder without the execute right
//     mounted noexec (a program [commands] names inside one bound again
//     at its own path), so ld.so maps nothing there any more than exec
//     runs it; at most DefaultMaxProcs tasks (harden.go: bubblewrap
//     leaves lnk-init CAP_SYS_ADMIN and CAP_SETPCAP in the sandbox's own
//     user namespace, where the command's user is root, for that, and it
//     drops them all before the command runs);
//   - where a cgroup is delegated to the user, its memory bounded by a
//     cgroup of its own, entered before bubblewrap runs (memory.go,
//     internal/cgroup);
//   - the environment cleared to Env's fixed list;
//   - no fd beyond 0–2 (lnk-init closes the rest);
//   - landlock: read on the system folders, the grants' rights on theirs,
//     execute only on [commands] (each resolved to its file, with its #!
//     and ELF interpreters), TCP connect only to the relay's port, signals
//     and abstract unix sockets scoped; seccomp's deny list;
//   - with a proxy (Options.RelayChannel): lnk-init listens on
//     127.0.0.1:RelayPort and hands the listener to the proxy on that
//     channel, and HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (and lowercase)
//     point there. The build never waits for the proxy: a connection
//     made before it accepts waits in the listener's backlog, and the
//     listener in the channel until the proxy takes it.
//
// # Security
//
// Holds: the fds of the granted folders, of the listed /etc files
// (read-only) and the plan memfd, until bubblewrap starts. May: open the granted folders (O_PATH, no links);
// make an empty .git, .vscode, .idea (folders) or .envrc (file) at the
// top of a written folder where absent; run bubblewrap. Trusts:
// caps.Compiled (checked by caps), bubblewrap and lnk-init at the paths
// it is given, and the kernel's handles (Options.Held). Refuses: a
// granted folder that became a link, vanished, or is another folder moved
// into its place, or one the kernel holds no handle of where it holds
// the others (ErrFolderChanged); a link at the top of a written folder in a
// read-only name's place (ErrReadOnlyLink); a command not in [commands]
// (ErrNotACommand); a kernel without landlock, seccomp or mount_setattr
// (ErrMissing) unless Options.Degraded.
package sandbox
