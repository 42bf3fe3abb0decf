// Package apply is lnk-file-tool's sandboxed side: the one place its calls
// (read, write, replace, find, list) touch files. `lnk-file-tool apply`
// runs it inside the agent's sandbox, one process a session; each call is
// a JSON line on its stdin, {"name", "arguments"}, and each answer a line
// back, {"ok": …} or {"error": "…"} ([Serve]).
//
// A [Session] holds what a session remembers: the version of each file it
// read or wrote, by path, and the text of the last file read from line 1,
// which later pages read instead of the disk. The versions are the MCP
// session's, not this process's: serve keeps them from the answers and
// hands them to a process it starts again in seen lines before the first
// call (seen.go); the kept text is not, and a later page reads the file
// again. It reaches files only through [Files], the seam that the disk
// ([Disk], over fsbroker's resolver) implements now and the files bridge
// implements later.
//
// # Names
//
// Every name is relative to the files folder (--files). A name whose first
// component is one of the agent folder's collections (instructions/,
// skills/, chats/, memory/) names that folder (--agent-folder) instead,
// when one was given. Each collection there, like each --write folder,
// is held as a resolver root of its own, since the sandbox binds each as
// a mount and the resolver never crosses one.
//
// # Security
//
// Holds: the files folder and the agent folder as resolver roots
// (O_PATH descriptors), opened once at the start.
//
// May do: read regular text files of at most 4 MiB beneath them, list and
// walk their folders, and write, through a file beside the target moved
// in place, beneath the folders --write names, making the folders on the
// way to a new file (0700), each beneath the one before. It opens nothing but
// through the resolver, starts no program and reaches no network. A read
// makes its system calls raw (resolve.Root.ReadFileRaw: the Go scheduler
// not told) where the folder is on a local filesystem, since apply serves
// one call at a time; elsewhere, as on NFS or FUSE, ordinary ones.
//
// Trusts: its command line (Link's), and seen lines before the first
// call (serve's: the agent reaches only serve's calls, each a call line
// serve writes), checked strictly all the same. Not the calls: they are
// the agent's. Not the files: a sandboxed process may change any of them
// while a call runs.
//
// Refuses, each said in words before the sandbox would refuse it and told
// apart with errors.Is: a name that is absolute, holds "..", or is not
// clean (resolve.ErrEscape, resolve.ErrInvalid); a link anywhere on the
// way (resolve.ErrLink), a FIFO, socket, device or folder where a file was
// meant (resolve.ErrNotRegular); a file over 4 MiB ([ErrTooLarge]) or not
// text ([ErrNotText]); a write outside the folders --write names
// ([ErrNotWritable]: under --write ., the folder itself, and the agent
// folder's instructions/ and skills/, its owner's, which the sandbox binds
// read-only), under chats/ or memory/ ever ([ErrNeverWrite]), or into the
// read-only .git, .envrc, .vscode, .idea of a written folder
// ([ErrReadOnly]); a write of a file changed since the version the
// session holds (resolve.ErrChanged); a find pattern past 1 MiB compiled
// (query.ErrTooLarge); a call line or arguments with a key twice, in
// another case or unknown, or a null where a value is needed, by Link's
// one strict decoder, wire.Unmarshal ([ErrUsage]). Each refusal is logged
// once, as the operation and its reason, never the path or the text, and
// answered {"error", "refused": true} ([IsRefusal]: not a file that isn't
// there), which serve marks for the bridge's audit line
// (internal/toolrefusal).
//
// Its answers stay below serve's cap ([MaxAnswer]): a list's entries
// stop past 10,000 (the first by name) and a list's entries or find's
// matches past 4 MiB JSON-encoded, each marked cut, and any answer line
// past the cap is answered as an error instead.
package apply
