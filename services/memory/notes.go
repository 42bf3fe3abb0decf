package memory

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/refusal"
)

// NotesFile is the notes' name in the agent's Agent/memory/, and
// MaxNotes the [tool.memory] notes limit on its size.
const (
	NotesFile = "notes.md"
	MaxNotes  = 4096
)

// Refusal is a call refused for a reason the model is told, with the
// lnk command that would change it (Hint) when there is one.
type Refusal = refusal.Refusal

// OwnersThread refuses a conversation that is not one of the owner's
// (internal/conversation's rule), as the harness names it (_meta
// link.local/thread): none, a teammate's
// (agent-<id>), a team's (team-<id>), a subagent's (task-<id>) or a
// stranger's (named as its sender, <kind>:<name>, as webhook:<name>).
func OwnersThread(thread string) error {
	why := conversation.NotOwners(thread) // the one rule (internal/conversation)
	switch {
	case thread == "":
		why = "this call names no conversation (_meta link.local/thread), so it cannot be shown to be one of your owner's"
	case why == "":
		return nil
	}
	return &Refusal{Reason: "remember writes your notes only in a conversation of your owner's: " + why + ". Nothing was written."}
}

// Remember adds text, as one line of its own, to the agent's notes
// (Agent/memory/notes.md), written whole and atomically, never through a
// link, refused when the notes would be larger than MaxNotes. thread is
// the conversation the call was made in.
func (a *Agent) Remember(thread, text string) (int, error) {
	if err := OwnersThread(thread); err != nil {
		return 0, err
	}
	text = strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD"))
	if text == "" {
		return 0, &Refusal{Reason: "remember needs the text of a note"}
	}
	if strings.ContainsRune(text, 0) {
		return 0, &Refusal{Reason: "a note holds no NUL byte"}
	}
	old, err := a.readNotes()
	if err != nil {
		return 0, err
	}
	note := strings.Join(strings.Fields(strings.ReplaceAll(text, "\r", "")), " ")
	next := old
	if next != "" && !strings.HasSuffix(next, "\n") {
		next += "\n"
	}
	next += "- " + note + "\n"
	if len(next) > MaxNotes {
		return 0, &Refusal{
			Reason: fmt.Sprintf("your notes would be %d bytes, more than the %d they may hold ([tool.memory] notes); nothing was written: your owner can shorten them", len(next), MaxNotes),
			Hint:   "lnk agent show --instructions shows the notes; edit Agent/memory/notes.md to shorten them",
		}
	}
	if err := ownerfile.WriteAtomic(a.mem, NotesFile, []byte(next), ownerfile.Write{Mode: 0o600}); err != nil {
		return 0, fmt.Errorf("writing the notes: %w", err)
	}
	return len(next), nil
}

// readNotes is the notes as they are: "" when there are none; an error
// (so nothing is written) for a link, a non-regular file or one past
// MaxNotes, which the owner must look at.
func (a *Agent) readNotes() (string, error) {
	f, err := ownerfile.OpenFile(a.mem, NotesFile, ownerfile.Rule{Type: unix.S_IFREG})
	if errors.Is(err, unix.ENOENT) {
		return "", nil
	}
	if err != nil {
		return "", &Refusal{Reason: fmt.Sprintf("your notes file cannot be read as a regular file of your owner's (%v); nothing was written", err)}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxNotes+1))
	if err != nil {
		return "", err
	}
	if len(b) > MaxNotes {
		return "", &Refusal{Reason: fmt.Sprintf("your notes are already more than the %d bytes they may hold ([tool.memory] notes); nothing was written", MaxNotes)}
	}
	return string(b), nil
}
