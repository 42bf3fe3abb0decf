package runtool

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/procstat"
	"lnk.dev/lnk/internal/resolve"
)

// killIfSurely kills r's process group only when it is surely r's: on
// the boot r was recorded on, with its leader the process recorded (the
// same start time) or gone (then no new group can have its ID: a
// group's ID is its leader's pid). A pid reused by another process is
// left alone. What cannot be read refuses: nothing is killed and the
// error says why.
func killIfSurely(r *Record) (what string, err error) {
	if r.Group.PID <= 1 {
		return "no group was recorded: its supervisor ended before starting one, and the sandbox with it", nil
	}
	boot, err := procstat.BootID()
	if err != nil {
		return "", err
	}
	if r.Boot != boot {
		return "recorded on another boot: nothing of it runs", nil
	}
	st, err := procstat.Read(r.Group.PID)
	switch {
	case errors.Is(err, procstat.ErrGone):
		// Its leader is gone: what is left of the group, if anything.
	case err != nil:
		return "", fmt.Errorf("reading its group's leader %d: %w", r.Group.PID, err)
	case st.Start != r.Group.Start:
		return fmt.Sprintf("pid %d is another process now: nothing killed", r.Group.PID), nil
	}
	if err := unix.Kill(-r.Group.PID, unix.SIGKILL); err != nil && err != unix.ESRCH {
		return "", fmt.Errorf("killing group %d: %w", r.Group.PID, err)
	}
	return fmt.Sprintf("group %d killed", r.Group.PID), nil
}

// endOrphan ends r, whose supervisor is gone (its lock is free and the
// caller holds it now): its group killed if surely its, its ending
// recorded once, and the record marked ended.
func (s *store) endOrphan(r *Record, reason string) error {
	if _, err := killIfSurely(r); err != nil {
		return err
	}
	r.State, r.Reason, r.Ended = StateEnded, reason, time.Now().UTC()
	if r.Code == 0 {
		r.Code = -1
	}
	if err := s.writeEnding(r); err != nil {
		return err
	}
	return s.write(r)
}

// sweep, under the folder's lock, ends every command whose supervisor is
// gone, and removes a record, its lock, its ending and its output
// background_keep after it ended and was told. It returns the records
// left, and how many of them still run.
func (a *Agent) sweep(s *store, keep time.Duration) (left []*Record, running int, err error) {
	ids, err := s.ids()
	if err != nil {
		return nil, 0, err
	}
	now := time.Now()
	for _, id := range ids {
		r, err := s.read(id)
		if err != nil {
			return nil, 0, fmt.Errorf("background record %s: %w", id, err)
		}
		if r.State != StateEnded {
			f, free, err := s.lock(id, false)
			if err != nil {
				return nil, 0, err
			}
			if !free {
				running++
				left = append(left, r)
				continue
			}
			if r, err = s.read(id); err == nil && r.State != StateEnded {
				err = s.endOrphan(r, EndOrphaned)
			}
			f.Close()
			if err != nil {
				return nil, 0, fmt.Errorf("background command %s: %w", id, err)
			}
		}
		since := r.Ended
		if r.Told.After(since) {
			since = r.Told
		}
		if !r.Told.IsZero() && now.Sub(since) > keep {
			if err := a.forget(s, id); err != nil {
				return nil, 0, err
			}
			continue
		}
		left = append(left, r)
	}
	return left, running, nil
}

// forget removes background command id's output, then its ending, lock
// and record.
func (a *Agent) forget(s *store, id string) error {
	if home, err := resolve.OpenRoot(a.FilesDir()); err == nil {
		err = home.Remove("background/" + id + ".out") // a link there is removed, never followed
		home.Close()
		if err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, resolve.ErrNotFound) {
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return s.remove(endingName(id), id+".lock", id+".json")
}
