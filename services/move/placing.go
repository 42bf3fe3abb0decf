package move

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// placing puts a receive in place all or nothing, across its areas: every
// name is first whole in the staging folder, then each rename it takes is
// recorded, and a failure anywhere (a rename, the secrets, the agent's
// files) undoes the recorded renames in reverse, so the agent here is
// either as it was or whole as it came. Each step holds duplicates of its
// folders' handles, so an undo goes through the same folders, never a
// path. Link's own signals (Ctrl-C, SIGHUP, SIGTERM) are caught for the
// whole receive and never stop it while it places; only a kill
// (SIGKILL, a power cut) can leave a placing half done.
type placing struct {
	steps []step
	fault func(n int) error // testing only: fails step n
}

// step is one rename made, or one folder made, and how it is undone.
type step struct {
	src, dst     int // duplicated handles: the folder it came from, and went to
	sname, dname string
	exchanged    bool         // RENAME_EXCHANGE: undone by exchanging again
	made         bool         // a folder made in dst: removed when empty again
	undo         func() error // a step that is no rename: what undoes it
}

// placeFault, when set (export_test.go), is asked before each step.
var placeFault func(n int) error

func newPlacing() *placing { return &placing{fault: placeFault} }

// check asks the test's fault, if any, before step n.
func (p *placing) check() error {
	if p.fault == nil {
		return nil
	}
	return p.fault(len(p.steps))
}

// dup duplicates a folder's handle for the record.
func dup(fd int) (int, error) {
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}

// rename renames src/sname to dst/dname with flags (RENAME_EXCHANGE or
// RENAME_NOREPLACE) and records it.
func (p *placing) rename(src int, sname string, dst int, dname string, flags uint) error {
	if err := p.check(); err != nil {
		return err
	}
	s, err := dup(src)
	if err != nil {
		return err
	}
	d, err := dup(dst)
	if err != nil {
		unix.Close(s)
		return err
	}
	if err := ownerfile.Rename(src, sname, dst, dname, flags); err != nil {
		unix.Close(s)
		unix.Close(d)
		return err
	}
	p.steps = append(p.steps, step{src: s, dst: d, sname: sname, dname: dname, exchanged: flags&unix.RENAME_EXCHANGE != 0})
	return nil
}

// swapIn puts the staging name in dst's place: exchanged with what is
// there (a link included, moved as itself, never followed), which then
// goes with the staging folder; moved when nothing is.
func (p *placing) swapIn(src int, name string, dst int, dstName string) error {
	err := p.rename(src, name, dst, dstName, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOENT) {
		err = p.rename(src, name, dst, dstName, unix.RENAME_NOREPLACE)
	}
	return err
}

// makeDir opens the folder name in dir (0700), making it when missing;
// one it made is removed again by an undo.
func (p *placing) makeDir(dir int, name string) (int, error) {
	if !has(dir, name) {
		if err := p.check(); err != nil {
			return -1, err
		}
		d, err := dup(dir)
		if err != nil {
			return -1, err
		}
		if err := unix.Mkdirat(dir, name, 0o700); err != nil {
			unix.Close(d)
			return -1, err
		}
		p.steps = append(p.steps, step{dst: d, dname: name, made: true, src: -1})
	}
	return ownerfile.MakeDir(dir, name, unix.O_PATH, ownerfile.PrivateDir)
}

// do runs a step that is no rename (the secrets, the moved note), after
// asking the test's fault, and records the func it returns, which undoes
// it.
func (p *placing) do(f func() (func() error, error)) error {
	if err := p.check(); err != nil {
		return err
	}
	undo, err := f()
	if err != nil {
		return err
	}
	p.steps = append(p.steps, step{src: -1, dst: -1, undo: undo})
	return nil
}

// undo reverses every step recorded, last first. What it cannot undo is
// returned with cause, never dropped.
func (p *placing) undo(cause error) error {
	var errs []error
	for i := len(p.steps) - 1; i >= 0; i-- {
		s := p.steps[i]
		var err error
		switch {
		case s.undo != nil:
			err = s.undo()
		case s.made:
			err = unix.Unlinkat(s.dst, s.dname, unix.AT_REMOVEDIR)
		case s.exchanged:
			err = ownerfile.Rename(s.src, s.sname, s.dst, s.dname, unix.RENAME_EXCHANGE)
		case s.src >= 0:
			err = ownerfile.Rename(s.dst, s.dname, s.src, s.sname, unix.RENAME_NOREPLACE)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.dname, err))
		}
	}
	p.close()
	if len(errs) > 0 {
		return fmt.Errorf("%w; undoing what was put in place failed, the agent here may be part old, part new: %w", cause, errors.Join(errs...))
	}
	return cause
}

// close ends the record, closing its handles.
func (p *placing) close() {
	for _, s := range p.steps {
		for _, fd := range []int{s.src, s.dst} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}
	p.steps = nil
}
