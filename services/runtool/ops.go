package runtool

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/procstat"
	"lnk.dev/lnk/internal/resolve"
)

// stopWait bounds how long a stop waits for a supervisor to end its
// command and release its lock.
const stopWait = 15 * time.Second

// List is the background commands conversation thread started, after a
// sweep. A call naming no conversation gets none.
func (a *Agent) List(thread string) ([]*Record, error) {
	if checkThread(thread) != nil {
		return nil, nil
	}
	all, err := a.records()
	if err != nil {
		return nil, err
	}
	var mine []*Record
	for _, r := range all {
		if r.Thread == thread {
			mine = append(mine, r)
		}
	}
	return mine, nil
}

// records sweeps and returns every record, under the folder's lock.
func (a *Agent) records() ([]*Record, error) {
	comp, err := a.grants()
	if err != nil {
		return nil, err
	}
	s, err := a.openStore()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	lk, err := s.lockAll()
	if err != nil {
		return nil, err
	}
	defer lk.Close()
	left, _, err := a.sweep(s, comp.Limits.Run.BackgroundKeep)
	return left, err
}

// find is thread's record id, or ErrNoSuch.
func (a *Agent) find(thread, id string) (*Record, error) {
	mine, err := a.List(thread)
	if err != nil {
		return nil, err
	}
	for _, r := range mine {
		if r.ID == id {
			return r, nil
		}
	}
	return nil, ErrNoSuch
}

// Read is up to max bytes of background command id's output from
// offset, read from the files folder through no link, and its record.
// Only a regular file with one name is read.
func (a *Agent) Read(thread string, ref Ref, max int64) ([]byte, *Record, error) {
	r, err := a.find(thread, ref.ID)
	if err != nil {
		return nil, nil, err
	}
	comp, err := a.grants()
	if err != nil {
		return nil, nil, err
	}
	home, err := resolve.OpenRoot(a.FilesDir())
	if err != nil {
		return nil, nil, err
	}
	defer home.Close()
	name := "background/" + r.ID + ".out"
	if info, err := home.Stat(name); err != nil {
		return nil, nil, err
	} else if !info.Mode.IsRegular() || info.Nlink != 1 {
		return nil, nil, fmt.Errorf("%s is not the output Link wrote (not a regular file of one name)", name)
	}
	b, _, err := home.ReadFile(name, comp.Limits.Run.BackgroundOutput)
	if err != nil {
		return nil, nil, err
	}
	if ref.Offset >= int64(len(b)) {
		return nil, r, nil
	}
	b = b[ref.Offset:]
	if int64(len(b)) > max {
		b = b[:max]
	}
	return b, r, nil
}

// Stop stops background command id of conversation thread, and returns
// its record once it has ended.
func (a *Agent) Stop(thread, id string) (*Record, error) {
	r, err := a.find(thread, id)
	if err != nil {
		return nil, err
	}
	return a.stop(r)
}

// StopAll stops every background command of the agent, whichever
// conversation started it: the agent's stop, restart, move and delete.
func (a *Agent) StopAll() error {
	if !a.hasStore() {
		return nil // never started one: nothing to stop, and nothing is made
	}
	all, err := a.records()
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range all {
		if _, err := a.stop(r); err != nil {
			errs = append(errs, fmt.Errorf("background command %s: %w", r.ID, err))
		}
	}
	return errors.Join(errs...)
}

// Forget stops every background command of the agent and removes every
// record and output: the agent's delete or move.
func (a *Agent) Forget() error {
	if !a.hasStore() {
		return nil // never started one: nothing to stop or remove
	}
	if err := a.StopAll(); err != nil {
		return err
	}
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	lk, err := s.lockAll()
	if err != nil {
		return err
	}
	defer lk.Close()
	ids, err := s.ids()
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := a.forget(s, id); err != nil {
			return err
		}
	}
	return s.remove(startsFile.Name)
}

// stop asks r's supervisor to stop its command (SIGTERM, only to the
// process recorded: same boot, same start time) and waits for it to
// release the lock; a supervisor already gone is swept here.
func (a *Agent) stop(r *Record) (*Record, error) {
	if r.State == StateEnded {
		return r, nil
	}
	s, err := a.openStore()
	if err != nil {
		return nil, err
	}
	defer s.Close()
	deadline := time.Now().Add(stopWait)
	signalled := false
	for {
		f, free, err := s.lock(r.ID, false)
		if err != nil {
			return nil, err
		}
		if free {
			cur, err := s.read(r.ID)
			if err == nil && cur.State != StateEnded {
				err = s.endOrphan(cur, EndStopped)
			}
			f.Close()
			if err != nil {
				return nil, err
			}
			return s.read(r.ID)
		}
		if !signalled {
			cur, err := s.read(r.ID)
			if err != nil {
				return nil, err
			}
			if cur.Supervisor.PID > 1 {
				if err := signalSupervisor(cur); err != nil {
					return nil, err
				}
				signalled = true
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("its supervisor did not end it within %s", stopWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// signalSupervisor sends SIGTERM to r's supervisor, only when the
// process at its pid is the one recorded.
func signalSupervisor(r *Record) error {
	boot, err := procstat.BootID()
	if err != nil {
		return err
	}
	st, err := procstat.Read(r.Supervisor.PID)
	if errors.Is(err, procstat.ErrGone) {
		return nil // its lock is about to be free
	}
	if err != nil {
		return err
	}
	if boot != r.Boot || st.Start != r.Supervisor.Start {
		return fmt.Errorf("its lock is held, but pid %d is not its supervisor: nothing signalled", r.Supervisor.PID)
	}
	if err := unix.Kill(r.Supervisor.PID, unix.SIGTERM); err != nil && err != unix.ESRCH {
		return err
	}
	return nil
}
