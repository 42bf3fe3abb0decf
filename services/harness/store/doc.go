// Package store keeps Link Harness's conversations: each one a log of
// events in the agent's own folder, Agent/chats/<thread>/events.jsonl,
// one JSON line per event, only ever added to, with conversation.md, its
// readable copy, beside it.
//
// # Layout
//
//	Agent/chats/                 0700, made by [OpenChats]
//	Agent/chats/<thread>/        0700, one per conversation ([CheckThread])
//	    events.jsonl             0600, the log: one [Event] a line, Seq rising
//	    events.zst               0600, compact chats only: zstd frames of whole lines
//	    conversation.md          0600, the readable copy, written by the store
//	    <n>.json                 an older Link Harness's chat: one event a file
//	    subagent.json            0600, a subagent's (task-<id>) tool list and model
//	    inbox.jsonl              0600, messages from others waiting for a turn ([Chats.Queue])
//
// A chat kept by an older Link Harness is a file per message in the
// thread's folder: <n>.json, n its number in decimal (1 and up), holding
// one event as this package writes it. Those are read first, checked as
// the log is (a regular file of the owner's, never a link or a pipe, at
// most 16 MiB), and the conversation goes on in events.jsonl with the
// numbers after the last of them; the files are never changed.
//
// A compact chat ([Options].Compact, [storage] conversations =
// "compact") keeps the same lines in zstd frames in events.zst, and
// those since in events.jsonl. [Conversation.Compact] moves the log's
// whole lines into a new frame under the same lock: events.zst is
// written anew beside itself and renamed over the old one, then the log
// is emptied through its handle. A crash between the two leaves lines in
// the log that are already in a frame: the next Open, seeing the log's
// last number in a frame, empties the log then, so a crash leaves the
// old chat or the new one. A
// frame is read only whole, and one that would decompress past 64 MiB is
// refused before it does.
//
// # The lock, the numbers, a torn line
//
// [Chats.Open] takes an exclusive flock on events.jsonl itself (the file
// is never renamed or replaced: only added to, trimmed of a torn line,
// emptied by a compaction), so writers, in this process or another, take
// turns; it waits at most [Options].LockWait. Each event's number is one
// past the last, and one already written (at most the last) is refused.
//
// Open reads only the log's last line (and a compact chat's last frame,
// and the names in the folder), so appending to a long conversation
// never reads it whole; [Conversation.Since] and [Conversation.Window]
// read the log from its end back only as far as they need.
// [Conversation.Events] reads, and checks, everything.
//
// An append is one write(2) of a whole line, the file opened O_APPEND.
// A crash (or a full disk) can still leave a last line without its
// newline: that partial line is not an event. Open logs it, with its
// length and first bytes, and cuts it off through the log's handle
// (ftruncate to the end of the last whole line), so the next append
// starts on a fresh line and what was whole stays as it was. Cutting it,
// rather than ending it with a newline and skipping it on every read,
// keeps the rule for the log simple: every line is one whole event, and
// anything else in it is corruption, which is refused. A short write
// is cut off the same way at once.
//
// # Durability
//
// An append is not fsynced: a turn's events are cheap to lose in a
// power cut and dear to sync on every message. A crash of the harness
// loses nothing written, since the kernel holds it. Compacting and
// writing conversation.md anew fsync the file and its folder before and
// after the rename, so the disk holds the old file or the new one.
//
// # The inbox
//
// inbox.jsonl holds messages from others that came while the
// conversation was in a turn: a line {"id","from","hops","tools","text"}
// each, then {"done": id} once it ran. Each line is one write(2) then
// fdatasync, under an in-process mutex and a flock on the file: a
// message [Chats.Queue] returned for survives a power cut. It holds at
// most [MaxQueuedMessages] waiting and [MaxInbox] bytes ([ErrInboxFull]
// past either); it is emptied once nothing waits. Ids are random, so an
// event's Queued names one message across the inbox's emptyings.
// [ParseInbox] refuses anything but those lines (unknown or repeated
// keys, a done mark of nothing, an id twice); a torn last line is cut
// off as the log's is.
//
// # Deleting a conversation
//
// [Chats.Delete] removes one: refused while a writer holds its log
// (tried without waiting) and, unless the agent is stopped, while its
// inbox holds a message or can't be read. Holding the log's lock, it
// renames the folder to .~deleting~<thread> (no name [CheckThread]
// takes, so never listed or opened; hidden from memory's walk), then
// removes it through internal/ownerfile's RemoveAll, never following a
// link; a link in the thread's place is removed as itself. What a
// delete cut short left aside is removed by the next.
//
// # conversation.md
//
// The owner's messages are headed "You", the agent's answers with the
// agent's name, a message from others "Others", naming who sent it, a
// tool's answer as that tool's; others' and tools' lines are quoted
// ("> "). Before any line of a message that would start a heading or
// HTML, a backslash: a line whose first character, past spaces, tabs,
// quote marks and list markers, is '#' or '<', opens a code fence (```
// or ~~~), or is a setext underline (only '=' or only '-'), so no answer
// can write a turn there as the owner's, open an HTML block, or hide
// what follows in a fence. Lines end at \n, \r\n and \r alike, as
// Markdown reads them.
//
// # Security
//
// Holds: the chats/ folder's handle, and for an open conversation its
// folder's handle, the log's (locked), the readable copy's. Every
// folder is opened from the one before through internal/ownerfile and
// internal/ownerdir (never through a link, the owner's, 0700) and every
// file in the conversation's folder through that folder's handle
// (O_NOFOLLOW, O_NONBLOCK, regular, the owner's, 0600): a folder or file
// swapped for a link after Open changes nothing read or written.
//
// Trusts: nothing in the files. The log lies in the agent's folder,
// where its run calls may write, so every reader is bounded and strict:
// a line past 16 MB, a frame past 64 MiB, an older chat's file past 16
// MiB, a line that is not one event (unknown or repeated keys), numbers
// that do not rise: each is refused with an error naming it, never
// skipped.
//
// Refuses: a thread name that is not [CheckThread]'s; a log, folder or
// file that is a link, a pipe, another user's or looser than 0600/0700;
// an event whose number is already written; an event whose line would
// pass 16 MB.
package store
