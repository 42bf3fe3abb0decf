// Package move carries one agent between machines (security.txt, "Moving
// your agent"): [Send] writes it as a move's entries (internal/moveentry)
// inside a sealed stream (helpers/keybroker/stream) to the receiving
// machine's per-transfer key, and [Receive] unpacks such a stream into
// ~/Link/Agents/.moving/<agent id> and, only once the whole stream
// authenticated, puts in place what this machine allows.
//
// The stream holds the preliminary copy (the files folder, memory's
// index), then the switch, sent only once the agent is paused and
// stopped: its settings first (agent.toml, sandbox.toml, and its secrets
// and its buckets' rclone.conf, each sealed apart to the same key; the
// conf read and checked by services/bucket), then its conversations, instructions,
// skills and Link Harness's home. One move of an agent at a time: each
// side holds ~/.lnk/moving/<agent id>.lock.
//
// # Security
//
// The sender reads each name from the folder holding it, opened without
// following a link: a link is sent as a link, one swapped in while it
// reads goes as a link too, and a link where an area's folder should be
// stops the move. A file over 8 MB, and every file of memory's index, is
// first copied aside to an unnamed file in ~/Link/Agents/.sending and sent
// from that copy, hashed as sent. A folder more than 32 deep stops it.
// Cancelled (Ctrl-C, a closed pipe, a stop), it never writes the stream's
// final record, so the receiver refuses what came.
//
// The receiver trusts nothing in the stream but what the sealed stream
// proves (that it was sealed to its key) and checks every entry
// (internal/moveentry's refusals). It unpacks only below its own staging
// folder (700, out of every harness's reach), each name made from its
// folder's handle (internal/ownerfile: RESOLVE_BENEATH, no link), so
// nothing lands outside it; files keep their permission bits only. It
// refuses, before anything is put in place: another format, a wrong
// recipient, a damaged, cut or extended stream; an agent whose name an
// agent here holds with another ID, or whose ID another agent here has.
// It then puts in place only the files folder (incoming files overwrite,
// nothing is deleted) and the state this machine's Link Harness names
// (Agent/chats, instructions, skills, memory; Harnesses/link, never a
// .env), each swapped in from folder handles, so a link in a state path's
// place is replaced, never followed. What the agent may do comes from
// this machine: one coming back keeps its grants and its rclone.conf
// here; a new one gets
// the stream's but for the grants that open the machine itself or reach
// past its sandbox (--read '~', --network-mode host, --lan-host, --port,
// --browser-host, --tcp, --tool, --command by path or *, and teams),
// each named as the lnk agent allow flag that would give it.
//
// Placing is all or nothing across areas (placing.go): every rename, a
// folder made, the secrets' merge, the rclone.conf written and the moved
// note's end are recorded,
// and a failure at any of them, or an agent that does not answer once in
// place (Receive.Answer), undoes them in reverse, an agent new here
// removed; the agent here is as it was, or whole as it came. Each step is
// first written to the placing journal, ~/.lnk/moving/<agent id>.placing
// (journal.go), and fsynced, so a placing a kill (SIGKILL, a power cut)
// cut short is undone by the next receive, restore or start of the agent
// ([Recover]) before anything else. [Journals] lists every journal by
// the name and ID its head recorded (lnk agent list, lnk agent recover),
// so an agent new here whose receive was killed before it was made is
// found without a lookup by name; [CheckNameFree] refuses making another
// agent of that name meanwhile, and [LockName], taken by lnk agent
// create and by a receive around their checks, keeps the two from
// making one name at once.
//
// # Backups and restores
//
// [Backup] writes the same state with the same sending tree as a standard
// tar, .lnk-backup/link.tar (Link Harness's home, never its .env) and
// Agent.tar (chats, instructions, skills: never memory's index or the
// scheduler's jobs), into the files folder through the backup folder's
// handle (ownerfile.Replacement), and notes each archive's SHA-256 in
// ~/.lnk/agents/<agent>/backup.json. [Restore] takes [Archives] opened as
// regular files ([OpenBackup], or a bucket pull's), once the agent is
// stopped; refuses any archive not byte for byte the last backup's;
// unpacks each with internal/moveentry's TarReader, the move's path rule,
// into a fresh ~/Link/Agents/.restoring-<random> from folder handles; and
// only once all of it unpacked and matched swaps the state in as a
// receive does.
package move
