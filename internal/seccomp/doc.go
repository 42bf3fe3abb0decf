// Package seccomp builds Link's seccomp filters from data (policy.go)
// with libseccomp (cgo) and loads them.
//
// Usage, in a broker's main, after landlock.Restrict:
//
//	err := seccomp.ConfineBroker(seccomp.Policy{Sockets: seccomp.SocketsUnix})
//
// A Policy says whether the process may exec (Exec), and which socket
// families it may create: SocketsNone, SocketsUnix (AF_UNIX only) or
// SocketsInet (AF_UNIX, AF_INET, AF_INET6) or SocketsInetOnly (AF_INET,
// AF_INET6: a broker that uses only the unix sockets it was handed). ptrace, process_vm_*, and the
// rest of the sandbox's deny list (Denials) are refused for every policy.
// ConfineBroker sets NO_NEW_PRIVS and loads the filter on every thread
// (TSYNC). Refused calls fail with EPERM (clone3 with ENOSYS, so libc
// falls back to clone, whose flags the filter can see); calls from a
// foreign architecture (i386 on x86_64) kill the process.
//
// SandboxBPF returns the sandbox's filter as raw BPF: lnk-init, built
// without cgo, embeds these bytes (internal/initstage), and a test there
// proves they equal what this package generates.
//
// # Security
//
// Holds nothing. May: set NO_NEW_PRIVS and load a filter on the calling
// process. Trusts: libseccomp to compile the rules faithfully (the BPF
// test in internal/initstage and the sandbox probes check the result).
// Refuses (in the filtered process): the deny list in policy.go; ioctl
// TIOCSTI and TIOCLINUX compared under a 32-bit mask; namespace flags on
// clone and unshare; socket families outside the policy; for a policy
// that may exec, memfd_create without MFD_NOEXEC_SEAL (ENOSYS).
package seccomp
