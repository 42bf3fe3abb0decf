package store

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// openReadable opens conversation.md for appending (never through a
// link, a regular file of the owner's), writing it anew from the events
// when it is empty: new, or lost.
func (v *Conversation) openReadable() error {
	f, err := openPrivate(v.dirFd(), readableName, unix.O_WRONLY|unix.O_APPEND)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() > 0 {
		v.readable = f
		return err
	}
	f.Close()
	return v.rewriteReadable()
}

// rewriteReadable writes conversation.md anew from every event, in one
// atomic rename, and opens it for appending.
func (v *Conversation) rewriteReadable() error {
	events, err := v.sinceLocked(0)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Conversation %s\n\n", escapeName(v.thread))
	for i := range events {
		renderEvent(&b, &events[i], v.o.Agent)
	}
	if err := ownerfile.WriteAtomic(v.dirFd(), readableName, b.Bytes(), ownerfile.Write{}); err != nil {
		return fmt.Errorf("writing %s: %w", readableName, err)
	}
	f, err := openPrivate(v.dirFd(), readableName, unix.O_WRONLY|unix.O_APPEND)
	if err != nil {
		return err
	}
	v.readable = f
	return nil
}

// appendReadable adds e's readable form to conversation.md. The event
// is in the log already, the one record: a readable copy that cannot be
// written is said in the log of the harness, and written anew from the
// events the next time the conversation opens with it empty.
func (v *Conversation) appendReadable(e *Event) {
	if v.readable == nil {
		return
	}
	var b bytes.Buffer
	renderEvent(&b, e, v.o.Agent)
	if _, err := v.readable.Write(b.Bytes()); err != nil {
		v.logf("%s not written (event %d is in %s): %v", readableName, e.Seq, logName, err)
	}
}

// renderEvent writes e as conversation.md shows it: a heading saying
// whose it is, then its lines, escaped, quoted when they are others'.
func renderEvent(b *bytes.Buffer, e *Event, agent string) {
	when := e.Time.UTC().Format("2006-01-02 15:04:05Z")
	head := func(who string) { fmt.Fprintf(b, "## %s · %d · %s\n\n", who, e.Seq, when) }
	switch e.Kind {
	case KindMessage:
		if e.From == "" {
			head("You")
			writeLines(b, e.Text, false)
		} else {
			head("Others · from " + escapeName(e.From))
			writeLines(b, e.Text, true)
		}
	case KindAnswer:
		head(escapeName(agent))
		writeLines(b, e.Text, false)
		writeCalls(b, e.Calls)
	case KindToolCall:
		head(escapeName(agent) + " · calls")
		writeCalls(b, e.Calls)
	case KindToolResult:
		head("Tool " + escapeName(e.From) + " answered")
		writeLines(b, e.Text, true)
	case KindSummary:
		head(escapeName(agent) + " · summary")
		writeLines(b, e.Text, false)
	}
	b.WriteByte('\n')
}

// writeCalls lists calls, each quoted on a line of its own.
func writeCalls(b *bytes.Buffer, calls []Call) {
	for _, c := range calls {
		args := string(c.Arguments)
		if len(args) > 512 {
			args = args[:512] + "…"
		}
		writeLines(b, "calls "+c.Name+" "+args, true)
	}
}

// writeLines writes text's lines (ended by \n, \r\n or \r, as Markdown
// ends them), each cleaned of control characters, with a backslash
// before one that would open a block ([opensBlock]), quoted ("> ") when
// quote is set.
func writeLines(b *bytes.Buffer, text string, quote bool) {
	if text == "" {
		return
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	for _, l := range strings.Split(text, "\n") {
		l = cleanLine(l)
		if opensBlock(l) {
			l = `\` + l
		}
		if quote {
			b.WriteString(">")
			if l != "" {
				b.WriteString(" ")
			}
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
}
