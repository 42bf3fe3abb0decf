// Package landlock confines the calling process with Linux landlock, by
// raw syscalls (golang.org/x/sys/unix), from folder handles the caller
// already holds.
//
// Usage:
//
//	usr, _ := unix.Open("/usr", unix.O_PATH|unix.O_CLOEXEC|unix.O_DIRECTORY, 0)
//	got, err := landlock.Restrict(
//	    landlock.Beneath(usr, landlock.Read|landlock.Exec),
//	    landlock.Beneath(dataFD, landlock.Read|landlock.Write),
//	    landlock.ConnectTCP(443),  // TCP ports; no TCP rule = no TCP at all
//	)
//
// Restrict handles every file right the kernel knows (read, write,
// execute, make, remove, refer, truncate, device ioctl), TCP bind and
// connect (ABI 4) unless AnyTCP is given, and scopes signals and abstract
// unix sockets to the caller's domain (ABI 6) unless AllowOutsideSignals
// is given. What is not granted by a rule is refused.
//
// Best effort, by ABI: rights the running kernel does not know are left
// out of the handled set (so not restricted) and reported in Status; a
// kernel without landlock returns ErrUnsupported and restricts nothing —
// the caller refuses to start unless the owner asked for a degraded run.
// Use ABI to learn what the kernel has.
//
// Threads: landlock confines one thread's credentials. Restrict covers
// every thread of a Go process: with the kernel's TSYNC flag when it has
// it; otherwise it confines the calling (locked) thread and re-executes
// /proc/self/exe with the same arguments and environment (plus
// LNK_LANDLOCK_REEXEC=1), so the whole new process starts inside the
// domain. Call it first thing in main, before marking inherited fds
// close-on-exec, so the re-executed program finds them again. For that
// re-exec the domain also allows reading and executing the program file
// and its ELF interpreter, and reading the files it has mapped (its
// shared libraries) and /etc/ld.so.cache — no more; a broker's seccomp
// policy refuses exec afterwards anyway. On its
// second call it sees the marker, confines again (harmless) and returns.
// RestrictThread confines only the calling thread, for a first stage that
// execs at once (lnk-init).
//
// # Security
//
// Holds nothing: it turns fds the caller holds into a ruleset and drops
// the ruleset fd (O_CLOEXEC) before returning. May: create a ruleset,
// add rules, set NO_NEW_PRIVS and restrict the caller, re-exec the caller.
// Trusts: its caller's rules. Refuses: an empty right set on a rule
// (ErrNoRights), and returns ErrUnsupported where the kernel lacks
// landlock rather than pretending to confine.
package landlock
