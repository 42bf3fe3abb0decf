package move

import (
	"encoding/json"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerdir"
	"lnk.dev/lnk/internal/ownerfile"
)

// The journal lives in ~/.lnk/moving, beside the move's lock: Link's own
// folder (700, the owner's), which no sandbox is given, so nothing an
// agent runs can write or swap it. Each file is opened from that folder's
// handle through no link (ownerfile), and must be the owner's own, 600.

// journalName is agent id's journal in ~/.lnk/moving.
func journalName(id string) string { return id + ".placing" }

// journal is a placing's journal, open for appending.
type journal struct {
	dir  int // ~/.lnk/moving
	name string
	fd   int // the journal, O_APPEND
	next int // the next step's number
}

// movingDir opens ~/.lnk/moving (made 700 when missing), through no link.
func movingDir(home string) (int, error) {
	d, err := ownerdir.Open(home, ".lnk", "moving")
	if err != nil {
		return -1, err
	}
	defer d.Close()
	return unix.FcntlInt(d.Fd(), unix.F_DUPFD_CLOEXEC, 0)
}

// newJournal writes the head of agent h.ID's journal, whole and durable,
// and opens it for its steps. One already there is never replaced: a
// placing cut short is recovered before another begins.
func newJournal(home string, h *journalHead) (*journal, error) {
	h.Format = journalFormat
	if err := h.check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrJournal, err)
	}
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	dir, err := movingDir(home)
	if err != nil {
		return nil, err
	}
	j := &journal{dir: dir, name: journalName(h.ID), fd: -1}
	if err := ownerfile.WriteAtomic(dir, j.name, append(b, '\n'), ownerfile.Write{NoReplace: true}); err != nil {
		unix.Close(dir)
		return nil, fmt.Errorf("writing ~/.lnk/moving/%s: %w", j.name, err)
	}
	if j.fd, err = openJournal(dir, j.name, unix.O_WRONLY|unix.O_APPEND); err != nil {
		j.remove()
		return nil, err
	}
	return j, nil
}

// openJournal opens the journal name in dir, the owner's own and 600.
func openJournal(dir int, name string, flags int) (int, error) {
	fd, err := ownerfile.Open(dir, name, flags, 0)
	if errors.Is(err, ownerfile.ErrLink) {
		return -1, fmt.Errorf("%w: ~/.lnk/moving/%s: %w", ErrJournal, name, err)
	}
	if err != nil {
		return -1, fmt.Errorf("opening ~/.lnk/moving/%s: %w", name, err)
	}
	if err := ownerfile.Check(fd, ownerfile.Private); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("%w: ~/.lnk/moving/%s: %w", ErrJournal, name, err)
	}
	return fd, nil
}

// add appends l, numbered as the next step, and makes it durable before
// its step is taken.
func (j *journal) add(l *journalLine) error {
	n := j.next
	l.Step = &n
	if err := j.write(l); err != nil {
		return err
	}
	j.next++
	return nil
}

// addAll appends ls, numbered as the next steps, in one write made
// durable by one fsync before any of their steps is taken: a batch's
// steps are journaled ahead together, and an undo tells, step by step,
// which of them were taken (a step journaled but never taken undoes as
// nothing), so what a crash leaves is undone as for one step at a time.
func (j *journal) addAll(ls []*journalLine) error {
	for i, l := range ls {
		n := j.next + i
		l.Step = &n
	}
	if err := j.write(ls...); err != nil {
		return err
	}
	j.next += len(ls)
	return nil
}

// undone appends that step n is undone, durable before the next undo.
func (j *journal) undone(n int) error {
	return j.write(&journalLine{Undone: &n})
}

// write appends ls, a line each, and makes them durable.
func (j *journal) write(ls ...*journalLine) error {
	var b []byte
	for _, l := range ls {
		line, err := json.Marshal(l)
		if err != nil {
			return err
		}
		if len(line) >= maxJournalLine {
			return fmt.Errorf("%w: a step over %d bytes", ErrJournal, maxJournalLine)
		}
		b = append(append(b, line...), '\n')
	}
	for len(b) > 0 {
		n, err := unix.Write(j.fd, b)
		if err != nil {
			return fmt.Errorf("writing ~/.lnk/moving/%s: %w", j.name, err)
		}
		b = b[n:]
	}
	if err := unix.Fsync(j.fd); err != nil {
		return fmt.Errorf("writing ~/.lnk/moving/%s: %w", j.name, err)
	}
	return nil
}

// remove ends the journal: its placing is done, or undone whole.
func (j *journal) remove() error {
	if j.fd >= 0 {
		unix.Close(j.fd)
		j.fd = -1
	}
	if j.dir < 0 {
		return nil
	}
	defer func() { unix.Close(j.dir); j.dir = -1 }()
	if err := unix.Unlinkat(j.dir, j.name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("removing ~/.lnk/moving/%s: %w", j.name, err)
	}
	return ownerfile.SyncDir(j.dir)
}

// close leaves the journal as it is (a placing that could not be undone
// whole: the next recovery takes it up).
func (j *journal) close() {
	if j.fd >= 0 {
		unix.Close(j.fd)
		j.fd = -1
	}
	if j.dir >= 0 {
		unix.Close(j.dir)
		j.dir = -1
	}
}

// readJournal reads agent id's journal back, opened for appending an
// undo's progress; nil, nil when there is none.
func readJournal(home, id string) (*journal, *journalRecord, error) {
	dir, err := movingDir(home)
	if err != nil {
		return nil, nil, err
	}
	name := journalName(id)
	fd, err := openJournal(dir, name, unix.O_RDWR|unix.O_APPEND)
	if errors.Is(err, unix.ENOENT) {
		unix.Close(dir)
		return nil, nil, nil
	}
	if err != nil {
		unix.Close(dir)
		return nil, nil, err
	}
	j := &journal{dir: dir, name: name, fd: fd}
	b, err := readAll(fd, name)
	if err != nil {
		j.close()
		return nil, nil, err
	}
	rec, err := parseJournal(b)
	if err != nil {
		j.close()
		return nil, nil, err
	}
	if rec.Head.ID != id {
		j.close()
		return nil, nil, fmt.Errorf("%w: it names agent %s", ErrJournal, rec.Head.ID)
	}
	// A last line cut short is cut off, so what is appended next starts
	// a line of its own.
	if whole := wholeLines(b); whole < len(b) {
		if err := unix.Ftruncate(fd, int64(whole)); err != nil {
			j.close()
			return nil, nil, err
		}
		if err := unix.Fsync(fd); err != nil {
			j.close()
			return nil, nil, err
		}
	}
	j.next = len(rec.Steps)
	return j, rec, nil
}

// readAll reads the journal fd (name in ~/.lnk/moving) whole, refusing
// one over maxJournal.
func readAll(fd int, name string) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Size > maxJournal {
		return nil, fmt.Errorf("%w: over %d bytes", ErrJournal, maxJournal)
	}
	b := make([]byte, st.Size)
	for off := 0; off < len(b); {
		n, err := unix.Pread(fd, b[off:], int64(off))
		if err == nil && n == 0 {
			err = errors.New("shorter than its size")
		}
		if err != nil {
			return nil, fmt.Errorf("reading ~/.lnk/moving/%s: %w", name, err)
		}
		off += n
	}
	return b, nil
}

// wholeLines is the length of b's whole lines.
func wholeLines(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			return i + 1
		}
	}
	return 0
}

// hasJournal reports whether agent id has a journal (an error: it may).
func hasJournal(dir int, id string) (bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dir, journalName(id), &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	return true, err // one that cannot be looked at may be there
}
