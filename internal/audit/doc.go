// Package audit is Link's audit log (the wire's log): one JSON line per
// capability grant, use, revocation, refusal with its reason, question,
// and start with less than the sandbox's whole confinement, kept in
// ~/.lnk/log/audit.log.
//
// The kernel alone writes it ([Open], [Log.Write]); `lnk sandbox log`
// reads it ([Tail], [Follower]). Lines are JSON objects ([Entry]) so the
// file can be shipped as it is to journald or a SIEM.
//
// # Security
//
// It holds the log's folder as an O_PATH handle and the open log file;
// it may append to the log, rename it aside when it reaches its cap
// ([Options].MaxBytes, rotated [Options].Keep times) and create a new one
// in the same folder. It never follows a link: the folder and the file are
// opened with O_NOFOLLOW, component by component from the held handle, and
// a log that is not a regular file of this uid with one link and mode
// 0600 is refused ([ErrNotOurs]). The file is opened O_APPEND, so a line
// is never written over another.
//
// It trusts nothing in an [Entry]: every string is cut to 512 bytes and
// passed through [textsafe.Line] before it is written, so no control,
// bidi or zero-width character reaches the file. What goes in an entry is
// the caller's promise: names, reasons and handles' short ids, never file
// contents, call arguments, answers or secrets.
//
// The reader holds at most 4 MiB of the log at a time, and cuts a line
// without an end into 64 KiB pieces (the spec's rules for `lnk agent
// logs`), so a log that grows in a burst, or without newlines, cannot make
// it hold ever more.
package audit
