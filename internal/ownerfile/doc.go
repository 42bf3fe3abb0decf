// Package ownerfile is Link's one routine for opening and writing the
// owner's own files (under ~/.lnk, ~/Link, the agents' Config/, the
// systemd unit): every open adds O_NOFOLLOW and O_CLOEXEC, a folder path
// is resolved beneath a held folder through no link at all (openat2
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, a per-component O_NOFOLLOW walk
// only where the kernel lacks openat2), a file read is refused unless it
// is regular, and a write is atomic: an O_EXCL temporary file in the same
// held folder, fsync, renameat (replacing or not, as the caller asks),
// fsync of the folder. Check holds the one owner-and-mode test.
//
// A repository test (internal/repotest) forbids unix.Openat, Openat2,
// Renameat, Renameat2 and os.Rename outside this package and a short list
// of files that open something else (the sandbox side's resolver, /proc,
// probes).
//
// # Security
//
// Trusts the folder descriptors it is given (the caller opened them
// through this package or holds them from the kernel); nothing named
// beneath them. Holds nothing past a call but the descriptors it returns.
package ownerfile
