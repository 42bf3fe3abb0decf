package move

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// placing puts a receive or a restore in place all or nothing, across its
// areas, and across a crash: every name is first whole in the staging
// folder, then each step (a rename, a folder made, the secrets, the
// rclone.conf, the moved note's end) is written to the placing journal
// (journal.go), durable, before it is taken, with what undoes it. A
// failure anywhere undoes the steps in reverse, in this process; a kill
// (SIGKILL, a power cut) leaves the journal, and the next lnk agent
// receive, restore or start of the agent undoes them from it (recover.go)
// before anything else, so the agent here is as it was, or whole as it
// came. Undo, never finishing: the old agent is whole on disk (in its
// place, or moved into the staging folder), while what came may be half
// in place.
//
// Each step holds duplicates of its folders' handles, so an undo in this
// process goes through the same folders, never a path; a recovery opens
// them by their path below ~/Link/Agents through no link and refuses one
// that is not the folder the journal names (its device and inode). An
// undo checks, by inode, whether its step was taken, so undoing a step
// twice, or one the kill came before, changes nothing.
type placing struct {
	home  string
	head  journalHead
	j     *journal
	steps []step
	fault func(n int) error // testing only: fails step n
	pause int               // the test hook's step (pausehook.go); -1: none
}

// step is one step taken, or begun, and how it is undone.
type step struct {
	src, dst int          // duplicated handles: the folder it came from, and went to (-1: none)
	rec      journalLine  // as the journal has it
	undo     func() error // in this process, a conf's: what undoes it
}

// folder is a held folder and its path below ~/Link/Agents, for the
// journal.
type folder struct {
	fd  int
	rel string
}

// placeFault, when set (export_test.go), is asked before each step.
var placeFault func(n int) error

// newPlacing begins a placing: its staging folder marked (so no sweep
// removes it while a journal names it), then its journal's head written.
func newPlacing(home string, h journalHead, st *staging) (*placing, error) {
	if err := ownerfile.WriteAtomic(st.fd, placingMark, []byte(h.ID), ownerfile.Write{}); err != nil {
		return nil, fmt.Errorf("marking the staging folder: %w", err)
	}
	j, err := newJournal(home, &h)
	if err != nil {
		return nil, err
	}
	p := &placing{home: home, head: h, j: j, fault: placeFault, pause: pauseStep(j.dir)}
	p.pauseAt(pauseHead)
	return p, nil
}

// check asks the test's fault, if any, before the next step.
func (p *placing) check() error {
	if p.fault == nil {
		return nil
	}
	return p.fault(len(p.steps))
}

// begin writes step rec to the journal, durable, before it is taken; the
// step is recorded from then on, taken or not, since its undo tells.
func (p *placing) begin(rec journalLine, src, dst int, undo func() error) (*step, error) {
	if err := p.j.add(&rec); err != nil {
		closeFDs(src, dst)
		return nil, err
	}
	p.steps = append(p.steps, step{src: src, dst: dst, rec: rec})
	p.pauseAt(*rec.Step)
	return &p.steps[len(p.steps)-1], nil
}

// placed is the end of the steps: all of them taken, the journal still
// there until the placing ends (a receive's Answer may still undo it).
func (p *placing) placed() { p.pauseAt(len(p.steps)) }

// dup duplicates a folder's handle for the record.
func dup(fd int) (int, error) {
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}

// idOf is the device and inode of name in dir (a link as itself), or of
// dir itself when name is "".
func idOf(dir int, name string) (fileID, error) {
	var st unix.Stat_t
	var err error
	if name == "" {
		err = unix.Fstat(dir, &st)
	} else {
		err = unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	}
	return fileID{Dev: uint64(st.Dev), Ino: st.Ino}, err
}

// rename renames src/sname to dst/dname with flags (RENAME_EXCHANGE or
// RENAME_NOREPLACE), journaled first. An exchange with nothing at dname
// is ENOENT, taking no step.
func (p *placing) rename(src folder, sname string, dst folder, dname string, flags uint) error {
	if err := p.check(); err != nil {
		return err
	}
	rec := journalLine{Op: opRename, Src: jname(src.rel), SName: jname(sname), Dst: jname(dst.rel), DName: jname(dname)}
	moved, err := idOf(src.fd, sname)
	if err != nil {
		return err
	}
	rec.Moved = &moved
	if flags&unix.RENAME_EXCHANGE != 0 {
		was, err := idOf(dst.fd, dname)
		if err != nil {
			return err
		}
		rec.Exchange, rec.Was = true, &was
	}
	sd, err := idOf(src.fd, "")
	if err != nil {
		return err
	}
	dd, err := idOf(dst.fd, "")
	if err != nil {
		return err
	}
	rec.SrcDir, rec.DstDir = &sd, &dd
	s, err := dup(src.fd)
	if err != nil {
		return err
	}
	d, err := dup(dst.fd)
	if err != nil {
		unix.Close(s)
		return err
	}
	if _, err := p.begin(rec, s, d, nil); err != nil {
		return err
	}
	return ownerfile.Rename(src.fd, sname, dst.fd, dname, flags)
}

// maxBatch bounds the renames journaled together (renameAll): their
// lines are held in memory, and each step holds its two folders'
// handles.
const maxBatch = 512

// renameAll moves each of names from src to dst (RENAME_NOREPLACE: none
// is there), their steps journaled together ahead of the first rename,
// durable by one fsync (journal.addAll says why that is as safe as one
// at a time): a merge of many top-level names into a folder that has
// none of them would otherwise wait on one fsync per name.
func (p *placing) renameAll(src folder, names []string, dst folder) error {
	for len(names) > 0 {
		batch := names[:min(len(names), maxBatch)]
		names = names[len(batch):]
		if err := p.renameBatch(src, batch, dst); err != nil {
			return err
		}
	}
	return nil
}

func (p *placing) renameBatch(src folder, names []string, dst folder) error {
	sd, err := idOf(src.fd, "")
	if err != nil {
		return err
	}
	dd, err := idOf(dst.fd, "")
	if err != nil {
		return err
	}
	recs := make([]*journalLine, 0, len(names))
	fds := make([]int, 0, 2*len(names))
	defer func() { closeFDs(fds...) }()
	for _, n := range names {
		moved, err := idOf(src.fd, n)
		if err != nil {
			return err
		}
		s, err := dup(src.fd)
		if err != nil {
			return err
		}
		fds = append(fds, s)
		d, err := dup(dst.fd)
		if err != nil {
			return err
		}
		fds = append(fds, d)
		recs = append(recs, &journalLine{Op: opRename, Src: jname(src.rel), SName: jname(n), Dst: jname(dst.rel), DName: jname(n),
			SrcDir: &sd, DstDir: &dd, Moved: &moved})
	}
	if err := p.j.addAll(recs); err != nil {
		return err
	}
	first := len(p.steps)
	for i, r := range recs {
		p.steps = append(p.steps, step{src: fds[2*i], dst: fds[2*i+1], rec: *r})
	}
	fds = nil // the steps hold them now
	for i, n := range names {
		// Each journaled and not yet taken: the hook and the test's
		// fault as for a step alone.
		p.pauseAt(first + i)
		if p.fault != nil {
			if err := p.fault(first + i); err != nil {
				return err
			}
		}
		if err := ownerfile.Rename(src.fd, n, dst.fd, n, unix.RENAME_NOREPLACE); err != nil {
			return err
		}
	}
	return nil
}

// swapIn puts the staging name in dst's place: exchanged with what is
// there (a link included, moved as itself, never followed), which then
// goes with the staging folder; moved when nothing is.
func (p *placing) swapIn(src folder, name string, dst folder, dstName string) error {
	err := p.rename(src, name, dst, dstName, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOENT) && has(src.fd, name) {
		err = p.rename(src, name, dst, dstName, unix.RENAME_NOREPLACE)
	}
	return err
}

// makeDir opens the folder name in dir (0700), making it when missing;
// one it made is removed again by an undo.
func (p *placing) makeDir(dir folder, name string) (folder, error) {
	sub := folder{fd: -1, rel: dir.rel + "/" + name}
	if !has(dir.fd, name) {
		if err := p.check(); err != nil {
			return sub, err
		}
		dd, err := idOf(dir.fd, "")
		if err != nil {
			return sub, err
		}
		d, err := dup(dir.fd)
		if err != nil {
			return sub, err
		}
		if _, err := p.begin(journalLine{Op: opMkdir, Dst: jname(dir.rel), DstDir: &dd, DName: jname(name)}, -1, d, nil); err != nil {
			return sub, err
		}
		if err := unix.Mkdirat(dir.fd, name, 0o700); err != nil {
			return sub, err
		}
	}
	fd, err := ownerfile.MakeDir(dir.fd, name, unix.O_PATH, ownerfile.PrivateDir)
	sub.fd = fd
	return sub, err
}

// do journals rec, a step that is no rename (the rclone.conf), after
// asking the test's fault, then runs f, keeping the func it returns,
// which undoes it in this process.
func (p *placing) do(rec journalLine, f func() (func() error, error)) error {
	if err := p.check(); err != nil {
		return err
	}
	s, err := p.begin(rec, -1, -1, nil)
	if err != nil {
		return err
	}
	undo, err := f()
	s.undo = undo
	return err
}

// undo reverses every step recorded, last first, each journaled as undone
// once it is; then removes the agent when it was new here, and ends the
// journal. A step it cannot undo stops it, the journal kept for the next
// recovery, and is returned with cause, never dropped.
func (p *placing) undo(cause error) error {
	if err := p.undoAll(); err != nil {
		return fmt.Errorf("%w; undoing what was put in place failed, the agent here may be part old, part new until lnk agent start %s undoes the rest (~/.lnk/moving/%s): %w",
			cause, p.head.Name, journalName(p.head.ID), err)
	}
	return cause
}

// undoAll is undo's work, shared with a recovery.
func (p *placing) undoAll() error {
	defer p.closeSteps()
	for i := len(p.steps) - 1; i >= 0; i-- {
		s := &p.steps[i]
		if err := p.undoStep(s); err != nil {
			p.j.close()
			return fmt.Errorf("step %d (%s %s): %w", *s.rec.Step, s.rec.Op, s.rec.DName, err)
		}
		if err := p.j.undone(*s.rec.Step); err != nil {
			p.j.close()
			return err
		}
	}
	if p.head.New {
		if err := removeNewAgent(p.home, &p.head); err != nil {
			p.j.close()
			return err
		}
	}
	return p.j.remove()
}

// undoStep undoes one step, when it was taken.
func (p *placing) undoStep(s *step) error {
	switch s.rec.Op {
	case opRename:
		return undoRename(s.src, s.dst, &s.rec)
	case opMkdir:
		err := unix.Unlinkat(s.dst, string(s.rec.DName), unix.AT_REMOVEDIR)
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	case opSecrets:
		return unmergeSecrets(p.home, p.head.ID, s.rec.Added, s.rec.Granted)
	case opNote:
		return putNoteBack(p.home, p.head.ID, []byte(s.rec.Note))
	case opConf:
		// In this process, PutConf's undo; in a recovery nothing: only an
		// agent new here has one written, and its undo removes it whole.
		if s.undo != nil {
			return s.undo()
		}
		return nil
	}
	return fmt.Errorf("%w: op %q", ErrJournal, s.rec.Op)
}

// undoRename puts back what the rename r moved, found by its inode: at
// dst/dname, it was taken, and is moved (or exchanged) back; still at
// src/sname, it never was. Anything else is refused: that is not the
// state the journal knows.
func undoRename(src, dst int, r *journalLine) error {
	sname, dname := string(r.SName), string(r.DName)
	at, err := idOf(dst, dname)
	if err == nil && at == *r.Moved {
		if r.Exchange {
			return ownerfile.Rename(src, sname, dst, dname, unix.RENAME_EXCHANGE)
		}
		return ownerfile.Rename(dst, dname, src, sname, unix.RENAME_NOREPLACE)
	}
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	if from, err := idOf(src, sname); err == nil && from == *r.Moved {
		return nil // never taken
	}
	return fmt.Errorf("%s is neither where it was put nor where it came from", r.DName)
}

// end ends a placing that succeeded: its journal removed.
func (p *placing) end() error {
	p.closeSteps()
	return p.j.remove()
}

// closeSteps closes the steps' handles.
func (p *placing) closeSteps() {
	for _, s := range p.steps {
		closeFDs(s.src, s.dst)
	}
	p.steps = nil
}

func closeFDs(fds ...int) {
	for _, fd := range fds {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}
