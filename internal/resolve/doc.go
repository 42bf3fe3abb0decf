// Package resolve is the one place in Link where a name becomes an open
// file. It holds a folder handle ([Root]) and opens, reads, writes,
// replaces, makes, removes, renames, lists and walks names beneath it, each
// folder on the way opened from the one before, never through a link.
// Every file Link touches for an agent — the file tool, memory, moves and
// restores, prompt files and skills, conversation logs — comes through
// here, usually by way of lnk-fsbroker.
//
// # Security
//
// Holds: one folder descriptor per [Root] (O_PATH|O_DIRECTORY), and for
// the length of a call the descriptors of the folders on the way.
//
// May do: anything the process's own rights allow beneath that folder,
// and nothing above it or beside it. [Root.ReadFileRaw] makes the same
// checks with raw system calls (the Go scheduler not told), and only on a
// local filesystem, where none of them can wait on a network or a FUSE
// server.
//
// Trusts: the folder it was handed, and nothing under it. Every name is
// the caller's and every file and folder beneath the root may be changed
// by a hostile process (a sandboxed agent) while a call runs.
//
// Refuses, each a distinct error told apart with errors.Is:
//   - a name that is not a clean relative name ([ValidatePath]): absolute
//     or with ".." ([ErrEscape]), or with an empty or "." component, a
//     NUL, or past the length caps ([ErrInvalid]) — checked before any
//     system call, so "ln/", "ln/." and "ln//" never reach the kernel;
//   - a symbolic or magic link anywhere on the way, the last component
//     included ([ErrLink]);
//   - a path that leaves the folder or crosses onto another mount
//     ([ErrEscape]);
//   - a read of anything but a regular file: FIFO, socket, device, folder
//     ([ErrNotRegular]); a read past its cap, counted on the bytes read
//     ([ErrTooLarge]);
//   - a write naming a version the file no longer has ([ErrChanged]), or
//     [Absent] for a name that exists ([ErrExists]);
//   - a lookup that kept racing renames past a bound ([ErrBusy]);
//   - and a missing name ([ErrNotFound], which also matches fs.ErrNotExist).
//
// # How a name is opened
//
// With openat2(2) and RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
// RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV, relative to the held descriptor:
// the kernel walks the whole name in one call and refuses, atomically
// against concurrent renames, any step that would leave the folder or pass
// a link. EAGAIN, and EXDEV caused by a concurrent rename, are retried up
// to 64 times within 50 ms; an EAGAIN that lasts is [ErrBusy], an EXDEV
// that repeats four times is [ErrEscape] (a mount or an escape, not a
// race).
//
// Only where openat2 answers ENOSYS (a kernel before 5.6, or a seccomp
// filter that hides it) does the package walk each component itself:
// openat(O_PATH|O_NOFOLLOW) from the folder before, fstat, refuse a link,
// a non-folder or another st_dev. That choice is made again at every call
// and never cached, and a refusal by openat2 never leads to the walk. The
// walk cannot see a bind mount of the same filesystem as a crossing, and
// if someone who can write outside the root moves a folder out of it
// while the walk is inside that folder, the rest of the walk happens
// there; openat2 refuses both.
//
// # Why one open, not O_PATH and a reopen
//
// A read opens the file once, O_RDONLY|O_NONBLOCK|O_NOCTTY, then fstats
// the descriptor and refuses anything but a regular file before reading a
// byte. O_NONBLOCK is what keeps this from blocking: opening a FIFO for
// reading returns at once, opening a socket fails (ENXIO), and a device
// driver's open is asked not to wait. Reopening an O_PATH descriptor would
// need /proc/self/fd (a magic link, a second path walk, and /proc in the
// broker's view) and costs about as much again as the open. openat2
// under these rules walks a path as fast as open(2) walks the same
// absolute one; the resolver's open adds only the fstat it cannot do
// without (BenchmarkOpenDepth8 reports both, and one bare system call,
// beside each other). The descriptor [Root.OpenFd] hands on keeps
// O_NONBLOCK, which a regular file ignores, to save a third call.
//
// What that gives up: a device node beneath the root is opened (then
// refused) rather than never opened. A device node cannot be made there
// without CAP_MKNOD in the machine's namespace, nor hard-linked there
// from /dev (another filesystem); a sandboxed agent can do neither. A
// device the owner put there, or hard-linked from the same filesystem,
// is opened with the owner's own rights and no controlling terminal, and
// closed at once.
//
// # Hard links
//
// A hard link is a regular file: it is read and written like any other,
// because nothing in the file says which of its names is the real one. So
// a file beneath the root may also have a name outside it, and reading it
// reads that file. A process can hard-link only a file it can name, on the
// same mount (a link across mounts is EXDEV, and a sandbox sees its
// folders as bind mounts), and under protected_hardlinks only one it owns
// or can read and write: a hostile process brings in nothing it could not
// already read. Callers that must not carry data across (a move, a
// restore, a backup) check the link count of what they opened (st_nlink
// from fstat of [Root.Open]'s file), or [Info.Nlink] where a race does not
// matter. A write here replaces the name with a new file (rename), so it
// never writes through a hard link into the other name's file.
//
// # Versions
//
// A [Version] is fstat's device, inode, size, and modification and change
// times in nanoseconds; [Absent] names a file that must not exist.
// [Root.WriteFile] and [Root.Replace] compare it just before the rename.
//
// # Leftover temporary files
//
// A write's temporary file is ".lnk-tmp-" and 32 random hex digits
// ([IsTempName]), beside the target. A process killed mid-write leaves it
// (never a half-written target); [Root.SweepTemps], which lnk-fsbroker
// runs over each writable root as it starts, removes those at least
// [TempMinAge] old, and only a regular file of exactly that shape with one
// name and the caller's uid, by unlinkat in its folder's handle.
package resolve
