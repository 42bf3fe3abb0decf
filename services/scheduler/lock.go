package scheduler

import (
	"fmt"

	"golang.org/x/sys/unix"

	"lnk.dev/lnk/internal/ownerfile"
)

// Lock takes the schedule's lock: flock LOCK_EX on a handle of its own
// of the schedule folder (opened again from the Store's, never through
// a link), waiting for it. Whoever removes a job while the runner may
// fire it (the server's cancel, lnk agent chats delete) holds it, and
// the runner holds it from a job's reading to its writing back, its
// firing between: a job removed is never fired or written again after.
// It returns what lets the lock go.
func (s *Store) Lock() (unlock func(), err error) {
	fd, err := ownerfile.OpenDir(s.Fd(), ".", unix.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("the schedule's lock: %w", err)
	}
	for {
		err = unix.Flock(fd, unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("the schedule's lock: %w", err)
	}
	return func() { unix.Close(fd) }, nil
}

// RemoveInto removes every job whose conversation is thread (the
// records of subagents it started included: a conversation started
// again under its name is not theirs), each through Remove, and returns
// their IDs. The caller holds Lock. A job that can't be read fails it
// before anything is removed: a job unread is never "none into it".
func (s *Store) RemoveInto(thread string) ([]string, error) {
	jobs, err := s.List()
	if err != nil {
		return nil, err
	}
	var gone []string
	for _, j := range jobs {
		if j.Thread != thread {
			continue
		}
		if err := s.Remove(j.ID); err != nil {
			return gone, fmt.Errorf("job %s: %w", j.ID, err)
		}
		gone = append(gone, j.ID)
	}
	return gone, nil
}
