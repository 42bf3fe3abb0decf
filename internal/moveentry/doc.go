// Package moveentry is the format of a move's entries: what lnk agent
// state-send writes inside the sealed stream (helpers/keybroker/stream)
// and lnk agent receive reads from it. It is the parser at the move's
// trust boundary: the machine an agent comes from wrote every byte, and
// the sealed stream proves only who could have written them, not that
// they are harmless.
//
// # Format
//
//	"lnk-move/v2\n"                       the format, 12 bytes
//	entries, each a kind byte then its fields:
//	  'h' head      len-prefixed JSON: id, name, harness    first, once
//	  'p' phase     one byte: 'c' the copy, 's' the switch  in that order, once each
//	  's' settings  four len-prefixed blobs: agent.toml,
//	                sandbox.toml, secrets sealed apart,
//	                rclone.conf sealed apart                first in the switch, once
//	  'd' folder    path, mode
//	  'f' file      path, mode, size, size bytes, SHA-256 of them
//	  'l' link      path, target
//	  'e' end       how many entries came before it         last; nothing may follow
//
// A length or number is an unsigned varint; a path is len-prefixed bytes.
//
// # Security
//
// A [Reader] trusts nothing it reads and refuses, each with one line
// saying why: another format or version ([ErrFormat]); an unknown kind, a
// hard link among them ([ErrEntry]); a path that is not a plain relative
// path (empty, a leading '/', "." or ".." anywhere, NUL, a name over 255
// bytes) or under an area its phase does not allow ([ErrPath]); a folder
// more than [MaxDepth] deep under its area ([ErrDepth]); an entry below a
// link that came before it, or below no folder that came before it, or a
// path sent twice ([ErrPath]); a file whose bytes do not match its SHA-256
// ([ErrHash]); entries out of order or past [MaxEntries] ([ErrOrder]); an
// end whose count is wrong, data after the end, or no end at all
// ([ErrEnd]). A mode keeps its permission bits only (0o777): setuid,
// setgid and sticky are dropped whatever the stream says.
//
// The reader checks what a stream says; putting it in place is the
// receiver's (services/move), which unpacks only into a folder of its own
// from folder handles and puts nothing in place before the end
// authenticated.
//
// A backup's archives are standard tar files of the switch's paths
// (home/…, chats/…, instructions/…, skills/…): [TarReader] reads one with
// the same path rule ([Tree], which [Reader] uses too), and refuses what a
// backup never holds (hard links, devices, pipes, sparse files, links
// where none may be, sizes past the archive's own, a cut archive).
package moveentry
